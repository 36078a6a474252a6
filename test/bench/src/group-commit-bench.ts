import { join } from 'node:path';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import type Database from 'better-sqlite3';
import { storeInFlight } from './append-bench.js';
import { IN_FLIGHT } from './config.js';
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
import { interleave } from './interleave.js';
import { createStoreSchema, INSERT_EVENT, openRaw, UPSERT_DOCUMENT } from './raw-db.js';
import { StreamSet } from './streams.js';
import { withTempDir } from './temp-dir.js';

/**
 * {@link IN_FLIGHT} rows per transaction, each what one store append does in SQL (check the stream's version,
 * insert the event, upsert the projection document), synchronous=FULL: the group commit's ceiling.
 */
function rawRowsPerTransaction(db: Database.Database, streams: StreamSet): (n: number) => Promise<void> {
  const version = db.prepare('SELECT MAX(stream_version) FROM events WHERE stream_id = ?').pluck();
  const insert = db.prepare(INSERT_EVENT);
  const upsert = db.prepare(UPSERT_DOCUMENT);
  let seq = 0;
  const appendRound = db.transaction(() => {
    const at = new Date().toISOString();
    streams.ids.forEach((id, i) => {
      const current = (version.get(id) as number | null) ?? 0;
      if (current !== streams.versions[i]) throw new Error(`raw: stream ${id} is at ${current}`);
      const data = JSON.stringify(benchData(seq));
      const info = insert.run(
        rawEventId(seq++),
        STREAM_TYPE,
        id,
        current + 1,
        BENCH_TYPE,
        1,
        data,
        META_JSON,
        at,
        null,
      );
      upsert.run(
        appendProjector.name,
        'last',
        id,
        JSON.stringify(lastOfStream(Number(info.lastInsertRowid), current + 1)),
      );
      streams.versions[i]!++;
    });
  });
  return async (n) => {
    for (let done = 0; done < n; done += IN_FLIGHT) {
      appendRound.immediate();
      await Promise.resolve();
    }
  };
}

/** {@link IN_FLIGHT} appends in flight through the store against raw {@link IN_FLIGHT} rows per transaction. */
export async function benchInFlightVsBatched(rounds: number): Promise<{ store: number; raw: number }> {
  return withTempDir('inflight', async (dir) => {
    const rawPath = join(dir, 'raw.sqlite3');
    await createStoreSchema(rawPath);
    const raw = openRaw(rawPath, 'FULL');
    const store = await openSqliteEventStore({
      path: join(dir, 'store.sqlite3'),
      registry: benchRegistry,
      projectors: [appendProjector],
    });
    try {
      const t = await interleave(
        storeInFlight(store, new StreamSet(IN_FLIGHT)),
        rawRowsPerTransaction(raw, new StreamSet(IN_FLIGHT)),
        rounds * IN_FLIGHT,
        4,
        // Warm until the JIT has compiled the store's commit path: after 2 rounds the store's first 2,000 events ran
        // at 0.27-0.46 of the raw side's speed, the third 2,000 at 0.65, then 0.7-0.86 (2026-12-02, a fresh process);
        // with 2 rounds of warm-up this row read 0.62-0.82 run to run, with 30 rounds 0.74-0.77.
        Math.min(30, rounds) * IN_FLIGHT,
      );
      return { store: t.a, raw: t.b };
    } finally {
      await store.close();
      raw.close();
    }
  });
}
