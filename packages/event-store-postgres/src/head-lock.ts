import type { LockedListing, Projector } from '@demiurge/event-store';
import { type Kysely, sql } from 'kysely';
import { type Listed, type ListedRow, listingsSubquery, parseListed } from './locked-listings.js';
import type { PipelinedTransaction } from './pipelined-transaction.js';
import type { ProjectorRunner } from './projector-runner.js';
import type { StoreSchema } from './schema.js';

type Db = Kysely<StoreSchema>;

/** The locked log head: the last committed position and its hash. */
export interface LockedHead {
  readonly position: number;
  readonly hash: Buffer;
}

/**
 * Takes the log-head row lock for the rest of the transaction: the serialized position allocator. Every
 * transaction that appends or writes projections takes it first, so positions are dense (a rolled-back append
 * rolls its allocation back) and commit in position order: a reader that has seen position N has seen every
 * position below it, and a tailing reader never skips an event that commits later with a lower position.
 *
 * Only the locked row is re-read after the wait (EvalPlanQual): anything else this statement read would be as
 * of before the wait. So what the transaction decides on (checkpoints, stream heads, keys) is read by later
 * statements, each with a snapshot taken after the lock was granted (or, in {@link lockForAppend}, by the
 * same statement when it did not wait).
 *
 * A transaction that writes projection documents without appending (a reset, a catch-up) passes `touch`: it
 * updates the row too, so that every writer leaves its transaction id on the row (its `xmin`). That is what
 * {@link lockForAppend} and the document cache check to know that nobody wrote since.
 */
export async function lockHead(tx: Db, options: { touch?: boolean } = {}): Promise<LockedHead> {
  const { rows } = await (options.touch
    ? sql<{ position: number; hash: Buffer }>`UPDATE log_head SET position = position RETURNING position, hash`
    : sql<{ position: number; hash: Buffer }>`SELECT position, hash FROM log_head FOR UPDATE`
  ).execute(tx);
  const row = rows[0];
  if (!row) throw new Error('the log_head row is missing: the database was changed behind the store');
  return { position: Number(row.position), hash: row.hash };
}

/** What an append reads under the lock before it decides. */
export interface AppendStart {
  readonly head: LockedHead;
  /** The transaction that last wrote the head row (`xmin`): the last writer of events or documents. */
  readonly writer: string;
  /** The lowest checkpoint of the store's projectors (null without projectors). */
  readonly lowest: number | null;
  /** The current type and version of each named stream that exists. */
  readonly streams: ReadonlyMap<string, { type: string; version: number }>;
  /** The decided appends' listings, as of the lock (one array per listing). */
  readonly listed: Listed[][];
}

/**
 * Begins the append's transaction, locks the head and reads what the append decides on (the named streams'
 * heads, the lowest checkpoint of `projectors`) in one statement sent together with `BEGIN`: one round trip.
 * The statement also reads the head row without the lock, as of its own snapshot: when that row is the locked
 * one (same `xmin`), nobody committed a write between the snapshot and the lock (every writer updates the
 * row), so what the statement read is current. When it waited for another transaction's lock, the reads are
 * done again by one statement that starts after the lock (one more round trip).
 *
 * `listings` are the decided appends' reads of projection documents ({@link listingsSubquery}): read in the
 * same statement, so a decision under the lock costs no round trip of its own.
 */
export async function lockForAppend(
  t: PipelinedTransaction,
  streamIds: readonly string[],
  projectors: readonly string[],
  listings: readonly LockedListing[] = [],
): Promise<AppendStart> {
  const rows = await t.begin(
    sql<{
      position: number;
      hash: Buffer;
      locked: string;
      seen: string | null;
      lowest: number | null;
      heads: [string, number, string][] | null;
      listed: ListedRow[] | null;
    }>`SELECT h.position, h.hash, h.xmin::text AS locked, (SELECT xmin::text FROM log_head) AS seen,
      (SELECT min(position) FROM projector_checkpoints WHERE name = ANY(${[...projectors]}::text[])) AS lowest,
      (SELECT json_agg(json_build_array(s.stream_id, s.stream_version, s.stream_type))
        FROM ${streamHeads(streamIds)}) AS heads,
      ${listingsSubquery(listings)} AS listed
    FROM log_head h FOR UPDATE OF h`.compile(t.tx),
  );
  const row = rows[0];
  if (!row) throw new Error('the log_head row is missing: the database was changed behind the store');
  const head = { position: Number(row.position), hash: row.hash };
  if (row.seen === row.locked) return started(head, row.locked, row, listings);
  // It waited for another writer: read again, after the lock, in one statement (one more round trip).
  const { rows: again } = await sql<{
    lowest: number | null;
    heads: [string, number, string][] | null;
    listed: ListedRow[] | null;
  }>`SELECT (SELECT min(position) FROM projector_checkpoints WHERE name = ANY(${[...projectors]}::text[])) AS lowest,
      (SELECT json_agg(json_build_array(s.stream_id, s.stream_version, s.stream_type))
        FROM ${streamHeads(streamIds)}) AS heads,
      ${listingsSubquery(listings)} AS listed`.execute(t.tx);
  return started(head, row.locked, again[0]!, listings);
}

/** What the locking statement (or the read after a wait) returned, as an {@link AppendStart}. */
function started(
  head: LockedHead,
  writer: string,
  row: { lowest: number | null; heads: [string, number, string][] | null; listed: ListedRow[] | null },
  listings: readonly LockedListing[],
): AppendStart {
  return {
    head,
    writer,
    lowest: row.lowest === null ? null : Number(row.lowest),
    streams: new Map((row.heads ?? []).map(([id, version, type]) => [id, { type, version }])),
    listed: parseListed(listings, row.listed),
  };
}

/**
 * The head (last version and type) of each named stream that exists, as a `FROM` item `s`: one descent of the
 * `(stream_id, stream_version)` index per id. Written as a lateral `LIMIT 1` per id, not `stream_id = ANY(...)`
 * with `DISTINCT ON`, because the statements are prepared: PostgreSQL's generic plan for an array of unknown size
 * chose a sequential scan of `events` for the latter, a cost that grew with the log on every append.
 */
function streamHeads(streamIds: readonly string[]) {
  return sql`unnest(${[...streamIds]}::text[]) AS u(sid)
    CROSS JOIN LATERAL (SELECT stream_id, stream_version, stream_type FROM events
      WHERE stream_id = u.sid COLLATE "C" ORDER BY stream_version DESC LIMIT 1) s`;
}

/** Brings projectors to the head in batches, each its own transaction under the log-head lock (touched). */
export async function catchUpProjectors(
  db: Db,
  runner: ProjectorRunner,
  projectors: readonly Projector[],
  batchSize: number,
  onStep?: (position: number, applied: number) => void,
): Promise<number> {
  let applied = 0;
  for (;;) {
    const step = await db.transaction().execute(async (tx) => {
      const head = await lockHead(tx, { touch: true });
      return runner.catchUp(tx, projectors, head.position, batchSize);
    });
    applied += step.applied;
    onStep?.(step.position, applied);
    if (step.done) return applied;
  }
}
