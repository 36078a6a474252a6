import type { EventRegistry, RecordedEvent } from '@demiurge/contracts';
import { type AppendResult, InvalidAppendError, type Projector, StreamTypeMismatchError } from '@demiurge/event-store';
import { type AppendPlan, checkExpectedVersion, eventIdempotencyKey, toRecorded } from '@demiurge/event-store/adapter';
import { type Kysely, sql } from 'kysely';
import { decodeRow, EVENT_COLUMNS, type EventRow } from './event-rows.js';
import { type ChainedRow, eventHash } from './hash-chain.js';
import { EVENTS_CHANNEL } from './log-publisher.js';
import { type DocumentWrites, documentWritesCtes, type ProjectorRunner } from './projector-runner.js';
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
 * statements, each with a snapshot taken after the lock was granted.
 */
export async function lockHead(tx: Db): Promise<LockedHead> {
  const { rows } = await sql<{ position: number; hash: Buffer }>`
    SELECT position, hash FROM log_head FOR UPDATE`.execute(tx);
  const row = rows[0];
  if (!row) throw new Error('the log_head row is missing: the database was changed behind the store');
  return { position: Number(row.position), hash: row.hash };
}

/**
 * Appends inside one transaction: lock the head, replay an idempotency key (an append with a key runs alone),
 * check stream types and expected versions, insert the events with their hashes, apply the projectors (caught
 * up first when another host left them behind), move the head and NOTIFY (delivered at commit).
 *
 * Several appends of this host share the transaction (a group commit): each is checked in order against the
 * stream heads as the earlier ones left them, and one that is refused (a version conflict, a stream type
 * mismatch) gets its error back without changing anything; the others' events share the one insert, the one
 * write of documents and the one commit. Each result is the append's result or its refusal.
 */
export async function appendInTransaction(
  tx: Db,
  plans: readonly AppendPlan[],
  registry: EventRegistry,
  runner: ProjectorRunner,
  projectors: readonly Projector[],
): Promise<(AppendResult | Error)[]> {
  const head = await lockHead(tx);
  const key = plans.length === 1 ? plans[0]!.idempotencyKey : undefined;
  if (plans.length > 1 && plans.some((p) => p.idempotencyKey !== undefined)) {
    throw new Error('an append with an idempotency key runs in a transaction of its own');
  }
  if (key !== undefined) {
    const { rows } = await sql<EventRow>`SELECT ${sql.raw(EVENT_COLUMNS)} FROM events
      WHERE idempotency_key = ${key} OR (idempotency_key > ${`${key}\u001f`} AND idempotency_key < ${`${key}\u0020`})
      ORDER BY position`.execute(tx);
    if (rows.length > 0) {
      const events = rows.map((r) => decodeRow(registry, r));
      return [{ events, lastPosition: events[events.length - 1]!.position, replayed: true }];
    }
  }
  // One round trip after the lock: the streams' heads and the lowest checkpoint of this store's projectors.
  const { rows: streamHeads } = await sql<{
    lowest: number | null;
    stream_id: string | null;
    stream_version: number;
    stream_type: string;
  }>`SELECT c.lowest, s.stream_id, s.stream_version, s.stream_type
    FROM (SELECT min(position) AS lowest FROM projector_checkpoints
          WHERE name = ANY(${projectors.map((p) => p.name)}::text[])) c
    LEFT JOIN (SELECT DISTINCT ON (stream_id) stream_id, stream_version, stream_type FROM events
               WHERE stream_id = ANY(${[...new Set(plans.flatMap((p) => p.streams.map((s) => s.streamId)))]}::text[])
               ORDER BY stream_id, stream_version DESC) s ON true`.execute(tx);
  const lowest = streamHeads[0]?.lowest ?? null;
  if (projectors.length > 0 && Number(lowest ?? 0) < head.position) {
    // A rebuild, or a host without these projectors, left them behind: catch them up before applying on them.
    while (!(await runner.catchUp(tx, projectors, head.position, 1000)).done) {
      // one batch per pass; the lock holds the head still
    }
  }
  const heads = new Map(
    streamHeads
      .filter((r) => r.stream_id !== null)
      .map((r) => [r.stream_id!, { type: r.stream_type, version: r.stream_version }]),
  );
  const events: RecordedEvent[] = [];
  const rows: (ChainedRow & { hash: Buffer })[] = [];
  const results: (AppendResult | Error)[] = [];
  let previous = head.hash;
  for (const plan of plans) {
    try {
      for (const stream of plan.streams) {
        const current = heads.get(stream.streamId);
        if (current && current.type !== stream.streamType) {
          throw new StreamTypeMismatchError(stream.streamId, stream.streamType, current.type);
        }
        checkExpectedVersion(stream.streamId, stream.expectedVersion, current?.version ?? 0);
      }
    } catch (err) {
      if (plans.length === 1) throw err;
      results.push(err as Error);
      continue;
    }
    const mine: RecordedEvent[] = [];
    for (const stream of plan.streams) {
      let version = heads.get(stream.streamId)?.version ?? 0;
      for (const event of stream.events) {
        version++;
        const row: ChainedRow = {
          position: head.position + rows.length + 1,
          event_id: event.eventId,
          stream_type: stream.streamType,
          stream_id: stream.streamId,
          stream_version: version,
          type: event.type,
          schema_version: event.schemaVersion,
          data: JSON.stringify(event.data),
          meta: JSON.stringify(event.meta),
          recorded_at: plan.recordedAt,
          idempotency_key: key === undefined ? null : eventIdempotencyKey(key, mine.length),
        };
        previous = eventHash(previous, row);
        rows.push({ ...row, hash: previous });
        mine.push(toRecorded(plan, stream, event, row.position, version));
      }
      heads.set(stream.streamId, { type: stream.streamType, version });
    }
    events.push(...mine);
    results.push({ events: mine, lastPosition: mine[mine.length - 1]?.position ?? head.position, replayed: false });
  }
  if (rows.length === 0) return results;
  const lastPosition = head.position + rows.length;
  const writes: DocumentWrites =
    projectors.length > 0
      ? await runner.applyCollect(tx, events)
      : { put: { p: [], c: [], i: [], d: [] }, gone: { p: [], c: [], i: [] } };
  // One statement: insert the events, write the projectors' documents, move the head and the projectors'
  // checkpoints (they have seen everything up to it), and NOTIFY, which PostgreSQL delivers at commit, in commit
  // order. Projectors read documents, never `events`, so the rows can wait until here. Its text never changes
  // (every value is a parameter, rows are arrays), so each connection prepares it once.
  const column = <K extends keyof (typeof rows)[number]>(k: K) => rows.map((r) => r[k]);
  try {
    await sql`WITH inserted AS (
        INSERT INTO events (position, event_id, stream_type, stream_id, stream_version, type, schema_version, data,
          meta, recorded_at, idempotency_key, hash)
        SELECT * FROM unnest(${column('position')}::bigint[], ${column('event_id')}::text[],
          ${column('stream_type')}::text[], ${column('stream_id')}::text[], ${column('stream_version')}::integer[],
          ${column('type')}::text[], ${column('schema_version')}::integer[], ${column('data')}::text[],
          ${column('meta')}::text[], ${column('recorded_at')}::text[], ${column('idempotency_key')}::text[],
          ${column('hash')}::bytea[])),
      ${documentWritesCtes(writes)},
      moved AS (UPDATE log_head SET position = ${lastPosition}, hash = ${previous} RETURNING position),
      checkpoints AS (UPDATE projector_checkpoints SET position = ${lastPosition}
        WHERE name = ANY(${projectors.map((p) => p.name)}::text[]))
      SELECT pg_notify(${EVENTS_CHANNEL}, position::text) FROM moved`.execute(tx);
  } catch (err) {
    const e = err as { code?: string; constraint?: string; detail?: string };
    if (e.code === '23505' && e.constraint === 'events_event_id_key') {
      // detail: Key (event_id)=(evt_x) already exists.
      const dup = rows.find((r) => e.detail?.includes(`=(${r.event_id})`))?.event_id;
      const what = dup === undefined ? 'an event id of this append' : `event id ${dup}`;
      throw new InvalidAppendError(`${what} is already recorded`, { cause: err });
    }
    throw err;
  }
  return results;
}
