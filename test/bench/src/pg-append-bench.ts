import type { EventStore } from '@demiurge/event-store';
import { openPostgresEventStore } from '@demiurge/event-store-postgres';
import pg from 'pg';
import {
  appendProjector,
  BENCH_TYPE,
  benchData,
  benchRegistry,
  lastOfStream,
  META_JSON,
  rawEventId,
  STREAM_TYPE,
} from './fixtures.js';
import { interleave, type Workload } from './interleave.js';
import { StreamSet } from './streams.js';

/**
 * Sequential single-event appends (each awaited) round-robin over `streams` streams with correct expected
 * versions, through the PostgreSQL store with the one inline projector of the SQLite append rows, against a raw
 * `pg` client doing the same statements by hand on a second database with the store's schema: BEGIN, lock the
 * log head, read the stream's version, insert the event, upsert the projection document, move the head and the
 * checkpoint with the NOTIFY, COMMIT. The raw side skips what the library adds: validation, the hash chain,
 * Kysely, the projection overlay, publishing on `events$`.
 */
export async function benchPgSequentialAppends(
  storeUrl: string,
  rawUrl: string,
  count: number,
  streams: number,
): Promise<{ store: number; raw: number }> {
  // The raw database gets the store's schema (tables, triggers, the head row, the projector's checkpoint).
  await (await openPostgresEventStore({ url: rawUrl, registry: benchRegistry, projectors: [appendProjector] })).close();
  const store = await openPostgresEventStore({
    url: storeUrl,
    registry: benchRegistry,
    projectors: [appendProjector],
  });
  const raw = new pg.Client({ connectionString: rawUrl });
  await raw.connect();
  try {
    const t = await interleave(
      storeSequential(store, new StreamSet(streams)),
      rawSequential(raw, new StreamSet(streams)),
      count,
      6,
      Math.min(200, Math.ceil(count / 10)),
    );
    return { store: t.a, raw: t.b };
  } finally {
    await store.close();
    await raw.end();
  }
}

function storeSequential(store: EventStore, streams: StreamSet): Workload {
  let seq = 0;
  return async (n) => {
    for (let k = 0; k < n; k++) {
      const i = streams.next();
      await store.append({
        streamType: STREAM_TYPE,
        streamId: streams.ids[i]!,
        expectedVersion: streams.versions[i]!,
        events: [{ type: BENCH_TYPE, data: benchData(seq++) }],
      });
      streams.versions[i]!++;
    }
  };
}

const LOCK = { name: 'raw-lock', text: 'SELECT position, hash FROM log_head FOR UPDATE' };
const VERSION = 'SELECT max(stream_version) AS v FROM events WHERE stream_id = $1';
const INSERT = `INSERT INTO events (position, event_id, stream_type, stream_id, stream_version, type, schema_version,
  data, meta, recorded_at, idempotency_key) VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $8, $9, NULL)`;
const UPSERT = `INSERT INTO projection_documents (projector, collection, id, doc) VALUES ($1, 'last', $2, $3)
  ON CONFLICT (projector, collection, id) DO UPDATE SET doc = excluded.doc`;
const MOVE = `WITH moved AS (UPDATE log_head SET position = $1 RETURNING position),
  checkpoint AS (UPDATE projector_checkpoints SET position = $1 WHERE name = $2)
  SELECT pg_notify('demiurge_events', position::text) FROM moved`;

function rawSequential(db: pg.Client, streams: StreamSet): Workload {
  let seq = 0;
  return async (n) => {
    for (let k = 0; k < n; k++) {
      const i = streams.next();
      const id = streams.ids[i]!;
      await db.query('BEGIN');
      try {
        const head = Number((await db.query<{ position: string }>(LOCK)).rows[0]!.position);
        const current = Number(
          (await db.query<{ v: number | null }>({ name: 'raw-version', text: VERSION, values: [id] })).rows[0]!.v ?? 0,
        );
        if (current !== streams.versions[i]) throw new Error(`raw: stream ${id} is at ${current}`);
        const position = head + 1;
        const data = JSON.stringify(benchData(seq));
        await db.query({
          name: 'raw-insert',
          text: INSERT,
          values: [
            position,
            rawEventId(seq++),
            STREAM_TYPE,
            id,
            current + 1,
            BENCH_TYPE,
            data,
            META_JSON,
            new Date().toISOString(),
          ],
        });
        const doc = JSON.stringify(lastOfStream(position, current + 1));
        await db.query({ name: 'raw-upsert', text: UPSERT, values: [appendProjector.name, id, doc] });
        await db.query({ name: 'raw-move', text: MOVE, values: [position, appendProjector.name] });
        await db.query('COMMIT');
      } catch (err) {
        await db.query('ROLLBACK');
        throw err;
      }
      streams.versions[i]!++;
    }
  };
}
