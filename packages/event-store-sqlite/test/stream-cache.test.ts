import { testEventRegistry } from '@demiurge/event-store/testing';
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { openSqliteEventStore, type SqliteEventStore } from '../src/index.js';
import { storeFileEachTest } from './temp-dir.js';

let path: string;
storeFileEachTest((file) => {
  path = file;
});

const open = () => openSqliteEventStore({ path, registry: testEventRegistry });
const increment = (store: SqliteEventStore, by: number, expectedVersion: number | 'no_stream' | 'any' = 'any') =>
  store.append({
    streamType: 'counter',
    streamId: 'c',
    expectedVersion,
    events: [{ type: 'test.incremented', data: { by } }],
  });
const amounts = async (store: SqliteEventStore, fromVersion?: number) =>
  (await store.readStream('c', fromVersion === undefined ? undefined : { fromVersion })).map(
    (e) => (e.data as { by: number }).by,
  );

it('a stream read after this store wrote it is served whole and in order, without a re-read', async () => {
  const store = await open();
  try {
    await increment(store, 1, 'no_stream');
    await increment(store, 2, 1);
    expect(await amounts(store)).toEqual([1, 2]);
    await increment(store, 3, 2);
    expect(await amounts(store)).toEqual([1, 2, 3]);
    expect(await amounts(store, 2)).toEqual([2, 3]);
    // Readers share the events: they are frozen, and the list is each caller's own.
    const read = await store.readStream('c');
    expect(Object.isFrozen(read[0]!.data)).toBe(true);
    read.pop();
    expect(await amounts(store)).toEqual([1, 2, 3]);
    expect((await store.readStream('nothing')).length).toBe(0);
  } finally {
    await store.close();
  }
});

it("another connection's commit is seen at the next read (the cache is dropped when data_version moves)", async () => {
  const a = await open();
  const b = await open();
  try {
    await increment(a, 1, 'no_stream');
    expect(await amounts(a)).toEqual([1]);
    await increment(b, 2, 1);
    expect(await amounts(a)).toEqual([1, 2]);
    // And a's next append at the version it now reads commits after b's.
    await increment(a, 3, 2);
    expect(await amounts(a)).toEqual([1, 2, 3]);
    expect(await amounts(b)).toEqual([1, 2, 3]);
  } finally {
    await a.close();
    await b.close();
  }
});

it("an append's expected version is checked against another connection's commit, not the cached head", async () => {
  const a = await open();
  const b = await open();
  try {
    await increment(a, 1, 'no_stream');
    await increment(a, 2, 1);
    // a knows the stream whole at version 2; b appends version 3 behind its back.
    expect(await amounts(a)).toEqual([1, 2]);
    await increment(b, 3, 2);
    // a's append at version 2 (the head it knew) is refused: the stream is at 3.
    await expect(increment(a, 4, 2)).rejects.toMatchObject({ name: 'StreamVersionConflictError' });
    // In one batch, a second append to the stream sees the first one's head.
    const [first, second, stale] = await Promise.allSettled([
      increment(a, 5, 3),
      increment(a, 6, 4),
      increment(a, 7, 4),
    ]);
    expect([first.status, second.status, stale.status]).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect(await amounts(b)).toEqual([1, 2, 3, 5, 6]);
  } finally {
    await a.close();
    await b.close();
  }
});

it("the head of a stream this store appended to is known without a read, also past the cached streams' length", async () => {
  // NORMAL: 300 commits without an fsync each (what is checked is the statements, not durability).
  const a = await openSqliteEventStore({ path, registry: testEventRegistry, synchronous: 'NORMAL' });
  const b = await open();
  const reads = countStreamHeadReads();
  try {
    // The first append to a stream the store knows nothing of reads its head.
    await increment(a, 1, 'no_stream');
    expect(reads.count).toBe(1);
    // Longer than the streams the cache keeps whole (256 events), and never read by a.
    for (let v = 1; v < 300; v++) await increment(a, 1, v);
    await Promise.all([increment(a, 1, 300), increment(a, 1, 301)]);
    expect(reads.count).toBe(1);
    // Another connection's commit moves data_version: a reads the head from the file again, and is refused.
    await increment(b, 1, 302);
    await expect(increment(a, 1, 302)).rejects.toMatchObject({ name: 'StreamVersionConflictError' });
    expect(reads.count).toBe(3);
    await increment(a, 1, 303);
    expect(reads.count).toBe(3);
    expect(await b.streamVersion('c')).toBe(304);
  } finally {
    reads.restore();
    await a.close();
    await b.close();
  }
});

it('the head a store remembers of a stream it wrote but never read is dropped when another connection commits', async () => {
  const a = await open();
  const b = await open();
  try {
    // b creates the stream: a never holds it whole, only the head of its own append below.
    await increment(b, 1, 'no_stream');
    await increment(a, 2, 1);
    // a appends again at the head it remembers (2): accepted.
    await increment(a, 3, 2);
    await increment(b, 4, 3);
    // a's remembered head (3) is stale now: its append at 3 is refused, at 4 accepted.
    await expect(increment(a, 5, 3)).rejects.toMatchObject({ name: 'StreamVersionConflictError' });
    await increment(a, 6, 4);
    expect(await amounts(b)).toEqual([1, 2, 3, 4, 6]);
  } finally {
    await a.close();
    await b.close();
  }
});

/** Counts the runs of the stream-head statement (`… ORDER BY stream_version DESC LIMIT 1`) of every connection. */
function countStreamHeadReads(): { count: number; restore(): void } {
  const db = new Database(':memory:');
  const proto = Object.getPrototypeOf(db.prepare('SELECT 1')) as { get: (...args: unknown[]) => unknown };
  db.close();
  const original = proto.get;
  const counter = {
    count: 0,
    restore: () => {
      proto.get = original;
    },
  };
  proto.get = function (this: { source: string }, ...args: unknown[]) {
    if (this.source.includes('ORDER BY stream_version DESC LIMIT 1')) counter.count++;
    return original.apply(this, args);
  };
  return counter;
}
