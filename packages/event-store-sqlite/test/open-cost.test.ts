import { counterProjector, notesProjector, testEventRegistry } from '@demiurge/event-store/testing';
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { openSqliteEventStore } from '../src/index.js';
import { storeFileEachTest } from './temp-dir.js';

let path: string;
storeFileEachTest((file) => {
  path = file;
});

const open = (busyTimeoutMs?: number) =>
  openSqliteEventStore({
    path,
    registry: testEventRegistry,
    projectors: [counterProjector, notesProjector],
    ...(busyTimeoutMs === undefined ? {} : { busyTimeoutMs, busyRetryMs: busyTimeoutMs }),
  });

async function writeNotes(n: number): Promise<void> {
  const store = await open();
  for (let i = 0; i < n; i++) {
    await store.append({
      streamType: 'note',
      streamId: `n${i}`,
      expectedVersion: 'no_stream',
      events: [{ type: 'test.noted', data: { text: `note ${i}` } }],
    });
  }
  await store.close();
}

it('every inline projector follows the head, also one that handled none of its events, without a write per commit', async () => {
  await writeNotes(5);
  const db = new Database(path, { readonly: true });
  try {
    // Marked once, by the first commit (at position 0, before its append): no later commit wrote them.
    const rows = db.prepare('SELECT name, position, follows_head FROM projector_checkpoints ORDER BY name').all();
    // counter handles no test.noted event: before checkpoints moved with every commit, it stayed at 0 and the
    // next open re-read the log.
    expect(rows).toEqual([
      { name: 'counter', position: 0, follows_head: 1 },
      { name: 'notes', position: 0, follows_head: 1 },
    ]);
  } finally {
    db.close();
  }
  const store = await open();
  try {
    expect(await store.projection('counter').checkpoint()).toEqual({ name: 'counter', version: 1, position: 5 });
  } finally {
    await store.close();
  }
});

it('opening a current store takes no write lock: it opens while another connection holds it', async () => {
  await writeNotes(3);
  const holder = new Database(path);
  holder.exec('BEGIN IMMEDIATE');
  try {
    const store = await open(200);
    try {
      expect(await store.head()).toBe(3);
      expect(await store.projection('notes').counts()).toEqual({ last: 3 });
      expect((await store.projection('counter').checkpoint()).position).toBe(3);
    } finally {
      await store.close();
    }
  } finally {
    holder.exec('ROLLBACK');
    holder.close();
  }
});

it("a commit that fails after catching up another connection's events catches them up again at the next commit", async () => {
  const a = await open();
  // Another writer without projectors: only a's catch-up puts its events into the read models.
  const b = await openSqliteEventStore({ path, registry: testEventRegistry });
  try {
    const created = (id: string) => ({
      streamType: 'counter',
      streamId: id,
      expectedVersion: 'no_stream' as const,
      events: [{ type: 'test.created', data: { name: id } }],
    });
    await a.append(created('a'));
    await b.append(created('b'));
    // Fails (the stream exists): its transaction caught up b's event, then rolled back with it.
    await expect(a.append(created('a'))).rejects.toThrow();
    await a.append(created('c'));
    expect(await a.projection('counter').get('streams', 'b')).toEqual({ name: 'b', total: 0, events: 1 });
  } finally {
    await a.close();
    await b.close();
  }
});

it('several appends in one commit: a refused one fails alone, the others commit', async () => {
  const store = await open();
  try {
    const make = (id: string, expected: 'no_stream' | number) =>
      store.append({
        streamType: 'counter',
        streamId: id,
        expectedVersion: expected,
        events: [{ type: 'test.created', data: { name: id } }],
      });
    await make('x', 'no_stream');
    const outcomes = await Promise.allSettled([make('y', 'no_stream'), make('x', 'no_stream'), make('z', 'no_stream')]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await store.head()).toBe(3);
    expect(Object.keys((await store.projection('counter').dump()).streams ?? {})).toEqual(['x', 'y', 'z']);
  } finally {
    await store.close();
  }
});
