import { join } from 'node:path';
import { dumpProjections, LogImportError, type StoredEventRecord } from '@demiurge/event-store';
import { counterProjector, testEventRegistry } from '@demiurge/event-store/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteEventStore, openSqliteLogAdmin } from '../src/index.js';
import { tempDir } from './temp-dir.js';

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.remove());

const open = (name: string) =>
  openSqliteEventStore({ path: join(dir.path, name), registry: testEventRegistry, projectors: [counterProjector] });

async function source(): Promise<StoredEventRecord[]> {
  const store = await open('source.sqlite3');
  for (let s = 0; s < 3; s++) {
    await store.append(
      {
        streamType: 'counter',
        streamId: `c-${s}`,
        expectedVersion: 'no_stream',
        events: [
          { type: 'test.created', data: { name: `c${s}` } },
          { type: 'test.incremented', data: { by: s + 1 } },
        ],
      },
      { idempotencyKey: `k-${s}` },
    );
  }
  await store.close();
  const admin = openSqliteLogAdmin(join(dir.path, 'source.sqlite3'), { registry: testEventRegistry });
  const records: StoredEventRecord[] = [];
  for await (const r of admin.records({ batchSize: 2 })) records.push(r);
  await admin.close();
  return records;
}

describe('openSqliteLogAdmin', () => {
  it('an import after a store ran leaves its following projectors behind, and the next open applies the imported events', async () => {
    const records = await source();
    // The target's first three events written by a store: its counter follows the head.
    const store = await open('target.sqlite3');
    const first = records.slice(0, 2);
    await store.append({
      streamType: 'counter',
      streamId: 'c-0',
      expectedVersion: 'no_stream',
      events: first.map((r) => ({ type: r.type, data: JSON.parse(r.data) })),
    });
    await store.close();
    const target = openSqliteLogAdmin(join(dir.path, 'target.sqlite3'), { registry: testEventRegistry });
    // Its own chain from position 2 on: the records' hashes chain to the source's first events, so they are recomputed.
    await target.importRecords(records.slice(2).map((r) => ({ ...r, hash: null })));
    await target.close();
    const reopened = await open('target.sqlite3');
    const a = await open('source.sqlite3');
    try {
      expect(await reopened.projection('counter').get('totals', 'all')).toBe(6);
      expect(await dumpProjections(reopened)).toEqual(await dumpProjections(a));
    } finally {
      await reopened.close();
      await a.close();
    }
  });

  it('imports recorded events keeping positions, keys and the chain; the next open builds the projections', async () => {
    const records = await source();
    expect(records.map((r) => r.position)).toEqual([1, 2, 3, 4, 5, 6]);
    const target = openSqliteLogAdmin(join(dir.path, 'target.sqlite3'), { registry: testEventRegistry });
    await target.importRecords(records.slice(0, 3));
    const head = await target.importRecords(records.slice(3));
    const copied: StoredEventRecord[] = [];
    for await (const r of target.records()) copied.push(r);
    await target.close();
    expect(copied).toEqual(records);
    const a = await open('source.sqlite3');
    const b = await open('target.sqlite3');
    expect(await b.chainHead()).toEqual(await a.chainHead());
    expect(head).toEqual(await a.chainHead());
    expect(await dumpProjections(b)).toEqual(await dumpProjections(a));
    // a replayed key on the copy returns the original events: the keys came along
    const replay = await b.append(
      {
        streamType: 'counter',
        streamId: 'c-0',
        expectedVersion: 'no_stream',
        events: [{ type: 'test.created', data: { name: 'c0' } }],
      },
      { idempotencyKey: 'k-0' },
    );
    expect(replay.events.map((e) => e.position)).toEqual([1, 2]);
    await a.close();
    await b.close();
  });

  it.each([
    ['a gap', (r: StoredEventRecord[]) => [r[0]!, r[2]!], /position 3: positions must follow the log's head 1/],
    [
      'a stream version out of order',
      (r: StoredEventRecord[]) => [{ ...r[1]!, position: 1, hash: null }],
      /position 1: stream c-0 is at version 0, this event has version 2/,
    ],
    [
      'another stream type',
      (r: StoredEventRecord[]) => [r[0]!, { ...r[1]!, streamType: 'other', hash: null }],
      /position 2: stream c-0 is a counter stream, this event says other/,
    ],
    [
      'a changed event',
      (r: StoredEventRecord[]) => [r[0]!, { ...r[1]!, data: '{"by":99}' }],
      /position 2: its hash does not chain/,
    ],
    [
      'an unknown type',
      (r: StoredEventRecord[]) => [{ ...r[0]!, type: 'test.nope', hash: null }],
      /position 1: unknown event type test\.nope/,
    ],
  ])('refuses %s, naming the position, and writes nothing of the batch', async (_, cut, message) => {
    const records = await source();
    const target = openSqliteLogAdmin(join(dir.path, 'target.sqlite3'), { registry: testEventRegistry });
    const refused = target.importRecords(cut(records));
    await expect(refused).rejects.toThrow(LogImportError);
    await expect(refused).rejects.toThrow(message);
    expect((await target.head()).position).toBe(0);
    await target.close();
  });
});
