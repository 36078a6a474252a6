import { notesProjector, testEventRegistry } from '@demiurge/event-store/testing';
import { expect, it } from 'vitest';
import { openSqliteEventStore, type SqliteEventStore } from '../src/index.js';
import { storeFileEachTest } from './temp-dir.js';
import { framesPerCommit, pageOwners, walEnd, walFramesSince } from './wal-frames.js';

// What one single-event append writes to the WAL (what a FULL commit then syncs): the pages of each b-tree,
// counted from the WAL's frame headers. The figures are deterministic (the same appends write the same
// pages); see docs/performance.md, "Pages per commit". NORMAL here: the frames are the same as under FULL,
// which only adds the fsync.

let path: string;
storeFileEachTest((file) => {
  path = file;
});

const STREAMS = 100;
const TEXT = 'x'.repeat(270);

/** Single-event appends round-robin over {@link STREAMS} streams, each with its expected version. */
function appender() {
  const versions = new Array<number>(STREAMS).fill(0);
  let next = 0;
  return async (store: SqliteEventStore, count: number) => {
    for (let k = 0; k < count; k++) {
      const i = next;
      next = (next + 1) % STREAMS;
      await store.append({
        streamType: 'note',
        streamId: `n-${i}`,
        expectedVersion: versions[i] === 0 ? 'no_stream' : versions[i]!,
        events: [{ type: 'test.noted', data: { text: `${k} ${TEXT}` } }],
      });
      versions[i]!++;
    }
  };
}

/** Frames per commit of `measured` appends on a log of 2,000 events (b-trees a few levels deep). */
async function measure(projectors: (typeof notesProjector)[], measured: number) {
  const append = appender();
  const open = () => openSqliteEventStore({ path, registry: testEventRegistry, projectors, synchronous: 'NORMAL' });
  let store = await open();
  await append(store, 2000);
  await store.close(); // checkpoints and empties the WAL
  store = await open();
  try {
    await append(store, 10);
    const from = walEnd(path);
    await append(store, measured);
    const { pageSize, owner } = pageOwners(path);
    const result = framesPerCommit(walFramesSince(path, from, pageSize), owner);
    // One commit per append, and no checkpoint restarted the WAL in between (the frames would be miscounted).
    expect(result.commits).toBe(measured);
    return result;
  } finally {
    await store.close();
  }
}

const trees = (byOwner: Record<string, number>) =>
  [...new Set(Object.keys(byOwner).map((k) => k.split(':')[0]))].sort();

it('a single-event append without projectors writes the events leaf, one leaf of each of its three indexes, and growth', async () => {
  const { total, byOwner } = await measure([], 100);
  // events_idempotency_key is partial (keyed appends only): an append without a key writes none of it.
  expect(trees(byOwner)).toEqual(
    ['events', 'events_type_position', 'header', 'sqlite_autoindex_events_1', 'sqlite_autoindex_events_2'].sort(),
  );
  for (const leaf of ['events', 'events_type_position', 'sqlite_autoindex_events_1', 'sqlite_autoindex_events_2']) {
    expect(byOwner[`${leaf}:leaf`]).toBeGreaterThanOrEqual(1);
  }
  // 4 leaves, then splits, interior pages and the header page when the file grows: 4.7 measured.
  expect(total).toBeGreaterThan(4);
  expect(total).toBeLessThan(5);
});

it('an inline projector adds its document leaf, and no checkpoint page: its checkpoint follows the head', async () => {
  const { total, byOwner } = await measure([notesProjector], 100);
  // A WITHOUT ROWID table keeps whole rows in its interior pages too: the document is in one or the other.
  const documents = (byOwner['projection_documents:leaf'] ?? 0) + (byOwner['projection_documents:internal'] ?? 0);
  expect(documents).toBeGreaterThanOrEqual(1);
  // Until migration 3 every commit rewrote the checkpoints leaf (1 page of 6.2-7.2).
  expect(byOwner['projector_checkpoints:leaf']).toBeUndefined();
  expect(total).toBeGreaterThan(5);
  expect(total).toBeLessThan(6.2);
});
