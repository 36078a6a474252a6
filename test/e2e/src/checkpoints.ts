/**
 * Each projector checkpoint's position as the store reads it, in one statement (one snapshot): a checkpoint that
 * follows the head (`follows_head`, the SQLite store's migration 3) includes the whole log, whatever its position.
 */
export const CHECKPOINT_POSITIONS = `SELECT name, CASE follows_head WHEN 1 THEN (SELECT COALESCE(MAX(position), 0)
  FROM events) ELSE position END AS position FROM projector_checkpoints`;
