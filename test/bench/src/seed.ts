import { eventHash, GENESIS_HASH } from '@demiurge/event-store-sqlite';
import { BENCH_TYPE, benchData, META_JSON, rawEventId, rebuildProjectors, STREAM_TYPE, streamId } from './fixtures.js';
import { createStoreSchema, INSERT_CHAINED_EVENT, openRaw } from './raw-db.js';

/** Events per stream in a seeded log. */
export const EVENTS_PER_STREAM = 100;
const ROWS_PER_TRANSACTION = 50_000;
const BASE_TIME = Date.parse('2025-01-01T00:00:00.000Z');

/**
 * Fills a new store file with `count` valid `bench.recorded` events by raw prepared inserts into the
 * store's own `events` table, hash-chained as the store chains them (so `verifyChain` holds), round-robin
 * over `count / 100` streams, and records the rebuild
 * projectors' checkpoints at the head so that opening the store does not catch them up first.
 */
export async function seedLog(path: string, count: number, onProgress?: (done: number) => void): Promise<void> {
  await createStoreSchema(path);
  const db = openRaw(path, 'NORMAL');
  try {
    const streams = Math.max(1, Math.floor(count / EVENTS_PER_STREAM));
    const insert = db.prepare(INSERT_CHAINED_EVENT);
    let previous = GENESIS_HASH;
    const fill = db.transaction((from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const row = {
          position: i + 1,
          event_id: rawEventId(i + 1),
          stream_type: STREAM_TYPE,
          stream_id: streamId(i % streams),
          stream_version: Math.floor(i / streams) + 1,
          type: BENCH_TYPE,
          schema_version: 1,
          data: JSON.stringify(benchData(i)),
          meta: META_JSON,
          recorded_at: new Date(BASE_TIME + i).toISOString(),
          idempotency_key: null,
        };
        previous = eventHash(previous, row);
        insert.run({ ...row, hash: previous });
      }
    });
    for (let from = 0; from < count; from += ROWS_PER_TRANSACTION) {
      const to = Math.min(count, from + ROWS_PER_TRANSACTION);
      fill.immediate(from, to);
      onProgress?.(to);
    }
    const checkpoint = db.prepare(
      `INSERT INTO projector_checkpoints (name, version, position) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET version = excluded.version, position = excluded.position`,
    );
    for (const p of rebuildProjectors) checkpoint.run(p.name, p.version, count);
  } finally {
    db.close();
  }
}
