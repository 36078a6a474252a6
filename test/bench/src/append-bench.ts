import { join } from 'node:path';
import type { EventStore } from '@demiurge/event-store';
import { openSqliteEventStore, type Synchronous } from '@demiurge/event-store-sqlite';
import type Database from 'better-sqlite3';
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
import { interleave, type Throughput, timed, type Workload } from './interleave.js';
import { createStoreSchema, INSERT_EVENT, openRaw, UPSERT_DOCUMENT } from './raw-db.js';
import { StreamSet } from './streams.js';
import { withTempDir } from './temp-dir.js';

export interface Comparison {
  /** Store operations (events) per second. */
  readonly store: number;
  /** Raw better-sqlite3 operations per second, same run, same pragmas. */
  readonly raw: number;
}

/**
 * Sequential single-event appends (each awaited) round-robin over `streams` streams with correct
 * expected versions, through the store with one inline projector, against a raw loop doing the same
 * version check + insert + projection upsert in one transaction per event.
 */
export async function benchSequentialAppends(
  synchronous: Synchronous,
  count: number,
  streams: number,
): Promise<Comparison> {
  return withStoreAndRaw(`seq-${synchronous}`, synchronous, async (store, raw) => {
    const result = await interleave(
      storeSequential(store, new StreamSet(streams)),
      rawSequential(raw, new StreamSet(streams)),
      count,
      8,
      Math.min(200, Math.ceil(count / 10)),
    );
    return fromThroughput(result);
  });
}

/**
 * 100 single-event appends in flight at a time (group commit), synchronous=FULL, against raw
 * one-row-per-transaction inserts with synchronous=FULL.
 */
export async function benchConcurrentAppends(rounds: number, rawCount: number): Promise<Comparison> {
  return withStoreAndRaw('concurrent', 'FULL', async (store, raw) => {
    const storeSide = storeInFlight(store, new StreamSet(IN_FLIGHT));
    const rawSide = rawOneRowPerTransaction(raw, new StreamSet(IN_FLIGHT));
    await storeSide(2 * IN_FLIGHT);
    await rawSide(2 * IN_FLIGHT);
    // Different totals per side: time each in 4 alternating chunks.
    const storeTotal = rounds * IN_FLIGHT;
    const storeChunk = Math.max(IN_FLIGHT, Math.floor(rounds / 4) * IN_FLIGHT);
    const rawChunk = Math.ceil(rawCount / 4);
    let storeMs = 0;
    let rawMs = 0;
    let storeDone = 0;
    let rawDone = 0;
    while (storeDone < storeTotal || rawDone < rawCount) {
      if (storeDone < storeTotal) {
        const n = Math.min(storeChunk, storeTotal - storeDone);
        storeMs += await timed(() => storeSide(n));
        storeDone += n;
      }
      if (rawDone < rawCount) {
        const n = Math.min(rawChunk, rawCount - rawDone);
        rawMs += await timed(() => rawSide(n));
        rawDone += n;
      }
    }
    return { store: (storeTotal * 1000) / storeMs, raw: (rawCount * 1000) / rawMs };
  });
}

async function withStoreAndRaw<T>(
  name: string,
  synchronous: Synchronous,
  work: (store: EventStore, raw: Database.Database) => Promise<T>,
): Promise<T> {
  return withTempDir(name, async (dir) => {
    const rawPath = join(dir, 'raw.sqlite3');
    await createStoreSchema(rawPath);
    const raw = openRaw(rawPath, synchronous);
    try {
      const store = await openSqliteEventStore({
        path: join(dir, 'store.sqlite3'),
        registry: benchRegistry,
        projectors: [appendProjector],
        synchronous,
      });
      try {
        return await work(store, raw);
      } finally {
        await store.close();
      }
    } finally {
      raw.close();
    }
  });
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

function rawSequential(db: Database.Database, streams: StreamSet): Workload {
  const version = db.prepare('SELECT MAX(stream_version) FROM events WHERE stream_id = ?').pluck();
  const insert = db.prepare(INSERT_EVENT);
  const upsert = db.prepare(UPSERT_DOCUMENT);
  let seq = 0;
  const appendOne = db.transaction((id: string, expected: number) => {
    const current = (version.get(id) as number | null) ?? 0;
    if (current !== expected) throw new Error(`raw: stream ${id} is at ${current}, expected ${expected}`);
    const data = JSON.stringify(benchData(seq));
    const at = new Date().toISOString();
    const info = insert.run(rawEventId(seq++), STREAM_TYPE, id, current + 1, BENCH_TYPE, 1, data, META_JSON, at, null);
    const doc = JSON.stringify(lastOfStream(Number(info.lastInsertRowid), current + 1));
    upsert.run(appendProjector.name, 'last', id, doc);
  });
  return async (n) => {
    for (let k = 0; k < n; k++) {
      const i = streams.next();
      appendOne.immediate(streams.ids[i]!, streams.versions[i]!);
      streams.versions[i]!++;
    }
  };
}

/** `n` events as rounds of {@link IN_FLIGHT} appends fired together, one per stream. */
export function storeInFlight(store: EventStore, streams: StreamSet): Workload {
  let seq = 0;
  return async (n) => {
    for (let done = 0; done < n; done += IN_FLIGHT) {
      await Promise.all(
        streams.ids.map((id, i) =>
          store.append({
            streamType: STREAM_TYPE,
            streamId: id,
            expectedVersion: streams.versions[i]!,
            events: [{ type: BENCH_TYPE, data: benchData(seq++) }],
          }),
        ),
      );
      for (let i = 0; i < streams.versions.length; i++) streams.versions[i]!++;
    }
  };
}

function rawOneRowPerTransaction(db: Database.Database, streams: StreamSet): Workload {
  const insert = db.prepare(INSERT_EVENT);
  let seq = 0;
  const insertOne = db.transaction((id: string, version: number) => {
    const data = JSON.stringify(benchData(seq));
    insert.run(
      rawEventId(seq++),
      STREAM_TYPE,
      id,
      version,
      BENCH_TYPE,
      1,
      data,
      META_JSON,
      new Date().toISOString(),
      null,
    );
  });
  return async (n) => {
    for (let k = 0; k < n; k++) {
      const i = streams.next();
      insertOne.immediate(streams.ids[i]!, ++streams.versions[i]!);
    }
  };
}

function fromThroughput(t: Throughput): Comparison {
  return { store: t.a, raw: t.b };
}
