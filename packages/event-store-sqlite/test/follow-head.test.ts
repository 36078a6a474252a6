import { counterProjector, testEventRegistry } from '@demiurge/event-store/testing';
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { openSqliteEventStore, type SqliteEventStore } from '../src/index.js';
import { storeFileEachTest } from './temp-dir.js';

// An inline projector's checkpoint follows the head (migration 3): no commit writes it, because every writer that
// appends applies it in the append transaction; a writer that does not apply it stops it at a position before
// its first append, and whoever runs it catches it up from there. The counter's total is not idempotent: an
// event applied twice, or skipped, shows in it.

let path: string;
storeFileEachTest((file) => {
  path = file;
});

const withCounter = () => openSqliteEventStore({ path, registry: testEventRegistry, projectors: [counterProjector] });
/** A writer that runs no projector (another tool, or code without this read model). */
const withoutProjectors = () => openSqliteEventStore({ path, registry: testEventRegistry });

const increment = (store: SqliteEventStore, by: number) =>
  store.append({
    streamType: 'counter',
    streamId: 'c1',
    expectedVersion: 'any',
    events: [{ type: 'test.incremented', data: { by } }],
  });

const total = (store: SqliteEventStore) => store.projection('counter').get<number>('totals', 'all');

/** The counter's row as another connection reads it. */
function counterRow(): { position: number; follows_head: number } {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare("SELECT position, follows_head FROM projector_checkpoints WHERE name = 'counter'").get() as {
      position: number;
      follows_head: number;
    };
  } finally {
    db.close();
  }
}

it('a writer without the projector stops it before its append; the next writer with it applies just those events', async () => {
  const a = await withCounter();
  const b = await withoutProjectors();
  try {
    for (const by of [1, 2, 3]) await increment(a, by);
    expect(counterRow()).toEqual({ position: 0, follows_head: 1 });

    await increment(b, 10);
    // Stopped at the head before b's event, which b did not apply.
    expect(counterRow()).toEqual({ position: 3, follows_head: 0 });
    expect(await a.projection('counter').checkpoint()).toMatchObject({ position: 3 });

    await increment(a, 100);
    // a caught up b's event first, followed the head again from 4, then applied its own.
    expect(counterRow()).toEqual({ position: 4, follows_head: 1 });
    expect(await total(a)).toBe(116);

    // b sees a's commit and stops it again.
    await increment(b, 1000);
    expect(counterRow()).toEqual({ position: 5, follows_head: 0 });
  } finally {
    await a.close();
    await b.close();
  }
  const reopened = await withCounter();
  try {
    expect(await total(reopened)).toBe(1116);
    await reopened.rebuild();
    expect(await total(reopened)).toBe(1116);
    await increment(reopened, 1);
    expect(counterRow()).toMatchObject({ follows_head: 1 });
    expect(await reopened.projection('counter').checkpoint()).toMatchObject({ position: 7 });
  } finally {
    await reopened.close();
  }
  const again = await withCounter();
  try {
    expect(await total(again)).toBe(1117);
  } finally {
    await again.close();
  }
});

it('two writers that both run it leave it following; neither applies an event twice', async () => {
  const a = await withCounter();
  const b = await withCounter();
  try {
    for (let i = 0; i < 20; i++) await Promise.all([increment(a, 1), increment(b, 10)]);
    expect(counterRow()).toMatchObject({ follows_head: 1 });
    expect(await total(a)).toBe(220);
    expect(await total(b)).toBe(220);
  } finally {
    await a.close();
    await b.close();
  }
  const reopened = await withCounter();
  try {
    expect(await total(reopened)).toBe(220);
  } finally {
    await reopened.close();
  }
});
