import type { Projector } from '@demiurge/event-store';
import { type CompiledQuery, type Kysely, sql } from 'kysely';
import type { GroupEntry } from './append-transaction.js';
import type { CacheStamp, DocumentCache, StreamHead } from './document-cache.js';
import type { ChainedRow } from './hash-chain.js';
import type { AppendStart } from './head-lock.js';
import { EVENTS_CHANNEL } from './log-publisher.js';
import { type DocumentWrites, documentWritesCtes } from './projector-runner.js';
import type { StoreSchema } from './schema.js';

/**
 * The append's last statement: insert the events, write the projectors' documents, move the head and the
 * projectors' checkpoints (they have seen everything up to it), and NOTIFY, which PostgreSQL delivers at commit,
 * in commit order. Its text never changes (every value is a parameter, rows are arrays), so each connection
 * prepares it once. It returns the transaction's id, which its update of the head leaves as the row's xmin (the
 * document cache's stamp).
 *
 * With `expected` (an append planned from the document cache, sent without a lock read before it: see
 * {@link startFromCache}), the head moves only if it is still at that position with that writer, and every other
 * write happens only if it moved; the statement then returns no row when someone else wrote since.
 */
export function writeStatement(
  tx: Kysely<StoreSchema>,
  rows: readonly (ChainedRow & { hash: Buffer })[],
  writes: DocumentWrites,
  projectors: readonly Projector[],
  last: { position: number; hash: Buffer },
  expected?: CacheStamp,
): CompiledQuery<{ xid: string }> {
  const column = <K extends keyof (typeof rows)[number]>(k: K) => rows.map((r) => r[k]);
  const guard = expected ? sql`EXISTS (SELECT 1 FROM moved)` : undefined;
  const moved = expected
    ? sql`moved AS (UPDATE log_head SET position = ${last.position}, hash = ${last.hash}
        WHERE position = ${expected.position} AND xmin::text = ${expected.xid} RETURNING position)`
    : sql`moved AS (UPDATE log_head SET position = ${last.position}, hash = ${last.hash} RETURNING position)`;
  return sql<{ xid: string }>`${expected ? sql`WITH ${moved}, ` : sql`WITH `}inserted AS (
      INSERT INTO events (position, event_id, stream_type, stream_id, stream_version, type, schema_version, data,
        meta, recorded_at, idempotency_key, hash)
      SELECT * FROM unnest(${column('position')}::bigint[], ${column('event_id')}::text[],
        ${column('stream_type')}::text[], ${column('stream_id')}::text[], ${column('stream_version')}::integer[],
        ${column('type')}::text[], ${column('schema_version')}::integer[], ${column('data')}::text[],
        ${column('meta')}::text[], ${column('recorded_at')}::text[], ${column('idempotency_key')}::text[],
        ${column('hash')}::bytea[])${guard ? sql` WHERE ${guard}` : sql``}),
    ${documentWritesCtes(writes, guard)},
    ${expected ? sql`` : sql`${moved},`}
    checkpoints AS (UPDATE projector_checkpoints SET position = ${last.position}
      WHERE name = ANY(${projectors.map((p) => p.name)}::text[])${guard ? sql` AND ${guard}` : sql``})
    SELECT pg_notify(${EVENTS_CHANNEL}, position::text), pg_current_xact_id()::xid::text AS xid FROM moved`.compile(tx);
}

/**
 * Where an append can start without reading anything under the lock: when the document cache is true as of this
 * store's last commit (no notification of a later head from another host has arrived), the transaction has no
 * decided append and no idempotency key, and the cache knows the head of every stream it appends to. The head,
 * its hash, the stream heads and the checkpoints (at the head: this store's commit left them there) are then
 * what that commit left, if nobody has written since: which the guarded {@link writeStatement} checks under the
 * lock, in the one statement of a one-round-trip transaction.
 */
export function startFromCache(
  entries: readonly GroupEntry[],
  cache: DocumentCache,
  notifiedHead: number,
): (AppendStart & { stamp: CacheStamp }) | undefined {
  const stamp = cache.current;
  if (stamp?.hash === undefined || notifiedHead > stamp.position) return undefined;
  const streams = new Map<string, StreamHead>();
  for (const plan of entries) {
    if ('decided' in plan || plan.idempotencyKey !== undefined) return undefined;
    for (const s of plan.streams) {
      const head = cache.streamHead(s.streamId);
      if (!head) return undefined;
      streams.set(s.streamId, head);
    }
  }
  return {
    head: { position: stamp.position, hash: stamp.hash },
    writer: stamp.xid,
    lowest: stamp.position,
    streams,
    listed: [],
    stamp,
  };
}
