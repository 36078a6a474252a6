import { join } from 'node:path';
import { defineProjector } from '@demiurge/event-store';
import { testEventRegistry } from '@demiurge/event-store/testing';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openSqliteEventStore } from '../src/index.js';
import { tempDir } from './temp-dir.js';

/** One document per event, keyed by its zero-padded position: the list order is the log order. */
const perEvent = defineProjector({
  name: 'per-event',
  version: 1,
  handles: ['test.incremented'],
  apply(event, tx) {
    tx.put('docs', String(event.position).padStart(6, '0'), { by: (event.data as { by: number }).by });
  },
});

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.remove());

it('a list with a limit returns exactly that many documents, in order, for limits written into the SQL and bound', async () => {
  const store = await openSqliteEventStore({
    path: join(dir.path, 'runtime.sqlite3'),
    registry: testEventRegistry,
    projectors: [perEvent],
  });
  try {
    const total = 4_200;
    for (let done = 0; done < total; done += 600) {
      await Promise.all(
        Array.from({ length: 600 }, (_, i) =>
          store.append({
            streamType: 'counter',
            streamId: `c${done + i}`,
            expectedVersion: 'no_stream',
            events: [{ type: 'test.incremented', data: { by: done + i } }],
          }),
        ),
      );
    }
    const reader = store.projection('per-event');
    const all = await reader.entries('docs');
    expect(all).toHaveLength(total);
    // Limits up to 4,096 are written into the SQL rounded up to a power of two, then cut; larger ones are bound.
    for (const limit of [0, 1, 2, 3, 5, 8, 9, 100, 4_095, 4_096, 4_097, 5_000]) {
      const listed = await reader.entries('docs', { limit });
      expect(listed.map((e) => e.id)).toEqual(all.slice(0, limit).map((e) => e.id));
    }
    // With a range and a start too.
    const after = all[10]!.id;
    expect((await reader.entries('docs', { after, limit: 3 })).map((e) => e.id)).toEqual(
      all.slice(11, 14).map((e) => e.id),
    );
    expect((await reader.entries('docs', { prefix: '0001', limit: 5 })).map((e) => e.id)).toEqual(
      all
        .filter((e) => e.id.startsWith('0001'))
        .slice(0, 5)
        .map((e) => e.id),
    );
  } finally {
    await store.close();
  }
});
