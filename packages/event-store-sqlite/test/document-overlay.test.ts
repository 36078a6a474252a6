import { join } from 'node:path';
import { defineProjector } from '@demiurge/event-store';
import { testEventRegistry } from '@demiurge/event-store/testing';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openSqliteEventStore } from '../src/index.js';
import { tempDir } from './temp-dir.js';

/**
 * Keeps a shared total (written by every increment: one document many appends of a batch write) and a
 * document per stream. The note "flush then fail" lists its documents (which writes what the batch holds
 * to SQLite, inside this append's savepoint), changes the total, deletes a stream's document, then throws.
 */
const shared = defineProjector({
  name: 'shared',
  version: 1,
  handles: ['test.incremented', 'test.noted'],
  apply(event, tx) {
    if (event.type === 'test.noted') {
      tx.list('streams');
      tx.put('totals', 'all', 1000);
      tx.delete('streams', 'a');
      if ((event.data as { text: string }).text === 'flush then fail') throw new Error('refused after a flush');
      return;
    }
    const by = (event.data as { by: number }).by;
    tx.put('totals', 'all', (tx.get<number>('totals', 'all') ?? 0) + by);
    tx.put('streams', event.streamId, { by });
  },
});

const increment = (streamId: string, by: number, expectedVersion: 'no_stream' | number = 'no_stream') => ({
  streamType: 'counter',
  streamId,
  expectedVersion,
  events: [{ type: 'test.incremented', data: { by } }],
});

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.remove());

it('a batch holds its documents until the commit: a refused append drops only its own writes, even after a flush', async () => {
  const path = join(dir.path, 'runtime.sqlite3');
  const store = await openSqliteEventStore({ path, registry: testEventRegistry, projectors: [shared] });
  try {
    await store.append(increment('seed', 10));
    // Issued together: one group-commit transaction, a savepoint each.
    const results = await Promise.allSettled([
      store.append(increment('a', 1)),
      store.append(increment('b', 2)),
      store.append({
        streamType: 'note',
        streamId: 'n',
        expectedVersion: 'any',
        events: [{ type: 'test.noted', data: { text: 'flush then fail' } }],
      }),
      store.append(increment('d', 4)),
      store.append(increment('seed', 100)), // refused: the stream exists
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'rejected']);
    const positions = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.lastPosition] : []));
    expect(positions).toEqual([2, 3, 4]);
    const reader = store.projection('shared');
    expect(await reader.get('totals', 'all')).toBe(17);
    const live = await reader.dump();
    expect(live).toEqual({
      totals: { all: 17 },
      streams: { seed: { by: 10 }, a: { by: 1 }, b: { by: 2 }, d: { by: 4 } },
    });
    await store.rebuild();
    expect(await store.projection('shared').dump()).toEqual(live);
  } finally {
    await store.close();
  }
  // What was read above is what the file holds.
  const db = new Database(path, { readonly: true });
  try {
    const row = db
      .prepare("SELECT doc FROM projection_documents WHERE projector = 'shared' AND collection = 'totals'")
      .get() as { doc: string };
    expect(JSON.parse(row.doc)).toBe(17);
  } finally {
    db.close();
  }
});

it('a batch whose every append succeeds writes each document once and equals a rebuild', async () => {
  const path = join(dir.path, 'runtime.sqlite3');
  const store = await openSqliteEventStore({ path, registry: testEventRegistry, projectors: [shared] });
  // Counts the writes SQLite sees to the shared total (a trigger, fired on the store's own connection).
  const probe = new Database(path);
  probe.exec(`CREATE TABLE total_writes (n INTEGER NOT NULL); INSERT INTO total_writes VALUES (0);
    CREATE TRIGGER total_inserted AFTER INSERT ON projection_documents WHEN NEW.collection = 'totals'
      BEGIN UPDATE total_writes SET n = n + 1; END;
    CREATE TRIGGER total_updated AFTER UPDATE ON projection_documents WHEN NEW.collection = 'totals'
      BEGIN UPDATE total_writes SET n = n + 1; END;`);
  try {
    await Promise.all(Array.from({ length: 40 }, (_, i) => store.append(increment(`s${i}`, i))));
    // 40 appends in one transaction moved the total 40 times: SQLite saw one write.
    expect(probe.prepare('SELECT n FROM total_writes').pluck().get()).toBe(1);
    const live = await store.projection('shared').dump();
    expect(live.totals).toEqual({ all: 780 });
    expect(Object.keys(live.streams ?? {})).toHaveLength(40);
    await store.rebuild();
    expect(await store.projection('shared').dump()).toEqual(live);
  } finally {
    probe.close();
    await store.close();
  }
});
