import Database from 'better-sqlite3';

/**
 * Closes a damaged store's connection without checkpointing its WAL into the file: a read-only connection
 * holds the file open meanwhile (SQLite checkpoints on close only as the last connection), and a read-only
 * connection never checkpoints.
 */
export function closeWithoutCheckpoint(db: Database.Database, path: string): void {
  let holder: Database.Database | undefined;
  try {
    holder = new Database(path, { readonly: true, fileMustExist: true });
    holder.pragma('schema_version');
  } catch {
    // the holder only keeps the file open; a damaged page it cannot read does not matter
  }
  try {
    db.close();
  } finally {
    holder?.close();
  }
}
