import { defineProjector, ProjectorFailedError, StreamVersionConflictError } from '@demiurge/event-store';
import { counterProjector, notesProjector, poisonProjector, testEventRegistry } from '@demiurge/event-store/testing';
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { openSqliteEventStore, type SqliteEventStore } from '../src/index.js';
import { storeFileEachTest } from './temp-dir.js';

/** Each checkpoint's position as the store reads it: the head while it follows the head (migration 3). */
const FOLLOWED_POSITIONS = `SELECT name, CASE follows_head WHEN 1 THEN (SELECT COALESCE(MAX(position), 0) FROM events)
  ELSE position END AS position FROM projector_checkpoints`;

// The counter again, applied after the commit: the two must always read alike.
const asyncCounter = defineProjector({
  name: 'counter-async',
  version: 1,
  mode: 'async',
  handles: counterProjector.handles,
  apply: counterProjector.apply,
});

let path: string;
storeFileEachTest((file) => {
  path = file;
});

const open = (lagMs: number) =>
  openSqliteEventStore({
    path,
    registry: testEventRegistry,
    projectors: [counterProjector, asyncCounter],
    asyncProjectionLagMs: lagMs,
  });

const increment = (store: SqliteEventStore, streamId: string, by: number) =>
  store.append({
    streamType: 'counter',
    streamId,
    expectedVersion: 'any',
    events: [{ type: 'test.incremented', data: { by } }],
  });

/** The checkpoints as another connection sees them: the position each includes (the head for one following it). */
function checkpoints(): Record<string, number> {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.prepare(FOLLOWED_POSITIONS).all() as {
      name: string;
      position: number;
    }[];
    return Object.fromEntries(rows.map((r) => [r.name, r.position]));
  } finally {
    db.close();
  }
}

it('is applied after the commit: behind in the file, caught up by a read, at the head after close', async () => {
  const store = await open(60_000);
  for (let i = 1; i <= 5; i++) await increment(store, `s${i % 2}`, i);
  // The inline counter is at the head in the same commit; the asynchronous one has not been applied yet.
  expect(checkpoints()).toEqual({ counter: 5, 'counter-async': 0 });
  expect(store.projectionLag()).toMatchObject({ projectors: ['counter-async'], pendingEvents: 5 });
  // A read through the store brings it to the head first.
  expect(await store.projection('counter-async').dump()).toEqual(await store.projection('counter').dump());
  expect(checkpoints()).toEqual({ counter: 5, 'counter-async': 5 });
  expect(store.projectionLag().pendingEvents).toBe(0);
  await increment(store, 's9', 100);
  expect(checkpoints()['counter-async']).toBe(5);
  await store.close();
  expect(checkpoints()).toEqual({ counter: 6, 'counter-async': 6 });
});

it('close leaves it at the head in the file when the last commits were of types it does not handle', async () => {
  const store = await open(60_000);
  await increment(store, 'a', 1);
  // A read applies it: at the head in memory and in the file.
  await store.projection('counter-async').dump();
  expect(checkpoints()['counter-async']).toBe(1);
  // Then commits none of whose events it handles: nothing to apply, so no transaction of its own moved it.
  await store.append({
    streamType: 'note',
    streamId: 'n',
    expectedVersion: 'any',
    events: [{ type: 'test.noted', data: { text: 'during close' } }],
  });
  expect(checkpoints()).toEqual({ counter: 2, 'counter-async': 1 });
  await store.close();
  expect(checkpoints()).toEqual({ counter: 2, 'counter-async': 2 });
});

it('reaches the head within its lag without being read', async () => {
  const store = await open(20);
  try {
    await increment(store, 'a', 1);
    await increment(store, 'a', 2);
    // No read, no later append: only its timer can apply the second event (the writer is idle).
    const waited = performance.now();
    while (checkpoints()['counter-async'] !== 2 && performance.now() - waited < 5000) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(checkpoints()['counter-async']).toBe(2);
    const lag = store.projectionLag();
    expect(lag).toMatchObject({ pendingEvents: 0 });
    expect(lag.ownTransactions).toBeGreaterThanOrEqual(1);
    // Applied by the timer, so not before the target lag; measured, and far below the wait's bound.
    expect(lag.maxLagMs).toBeGreaterThanOrEqual(15);
    expect(lag.maxLagMs).toBeLessThan(5000);
  } finally {
    await store.close();
  }
});

it('under a burst it rides in the group commits, and equals a rebuild once caught up', async () => {
  const store = await open(4);
  try {
    const started = performance.now();
    let i = 0;
    while (performance.now() - started < 300) {
      await Promise.all(Array.from({ length: 8 }, (_, w) => increment(store, `w${w}`, ++i)));
    }
    const lag = store.projectionLag();
    expect(lag.inGroupCommits).toBeGreaterThan(0);
    const live = await store.projection('counter-async').dump();
    expect(live).toEqual(await store.projection('counter').dump());
    await store.rebuild({ projectors: ['counter-async'] });
    expect(await store.projection('counter-async').dump()).toEqual(live);
  } finally {
    await store.close();
  }
});

it('left behind (a crash before it was applied), another open catches it up from the log, once', async () => {
  const first = await open(60_000);
  for (let i = 1; i <= 4; i++) await increment(first, 'x', i);
  expect(checkpoints()['counter-async']).toBe(0);
  // A second connection opens meanwhile (the first could as well have been killed): it catches up at open.
  const second = await open(60_000);
  expect(checkpoints()['counter-async']).toBe(4);
  expect(await second.projection('counter-async').get('totals', 'all')).toBe(10);
  await second.close();
  // The first store still holds those events in memory: applying them again would count them twice.
  await increment(first, 'x', 5);
  expect(await first.projection('counter-async').get('totals', 'all')).toBe(15);
  expect(await first.projection('counter').get('totals', 'all')).toBe(15);
  await first.close();
});

it('a failing asynchronous projector fails its reads, not the appends', async () => {
  const poisonAsync = defineProjector({ ...poisonProjector, name: 'poison-async', mode: 'async' });
  const store = await openSqliteEventStore({
    path,
    registry: testEventRegistry,
    projectors: [notesProjector, poisonAsync],
    asyncProjectionLagMs: 60_000,
  });
  try {
    const note = (text: string) => ({
      streamType: 'note',
      streamId: 'n',
      expectedVersion: 'any' as const,
      events: [{ type: 'test.noted', data: { text } }],
    });
    await store.append(note('fine'));
    await store.append(note('poison'));
    expect(await store.head()).toBe(2);
    expect(await store.projection('notes').get('last', 'n')).toMatchObject({ text: 'poison' });
    const err = await store
      .projection('poison-async')
      .dump()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProjectorFailedError);
    expect(err).toMatchObject({ projector: 'poison-async', position: 2 });
  } finally {
    await store.close();
  }
});

it('a batch without savepoints: a refused and a failing append leave the others committed', async () => {
  const store = await openSqliteEventStore({
    path,
    registry: testEventRegistry,
    projectors: [notesProjector, poisonProjector],
  });
  try {
    const note = (streamId: string, text: string, expectedVersion: 'any' | number = 'any') => ({
      streamType: 'note',
      streamId,
      expectedVersion,
      events: [{ type: 'test.noted', data: { text } }],
    });
    // Issued in one tick: one group commit.
    const results = await Promise.allSettled([
      store.append(note('a', 'one')),
      store.append(note('b', 'refused', 7)),
      store.append(note('c', 'poison')),
      store.append(note('d', 'two')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(StreamVersionConflictError);
    expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(ProjectorFailedError);
    expect((await store.readAll()).map((e) => [e.position, e.streamId])).toEqual([
      [1, 'a'],
      [2, 'd'],
    ]);
    expect(Object.keys((await store.projection('notes').dump()).last ?? {})).toEqual(['a', 'd']);
    expect((await store.verifyChain()).ok).toBe(true);
  } finally {
    await store.close();
  }
});
