import { join } from 'node:path';
import { counterProjector, testEventRegistry } from '@demiurge/event-store/testing';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openSqliteEventStore } from '../src/index.js';
import { tempDir } from './temp-dir.js';

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.remove());

/**
 * A lone caller's appends, each right after the previous one committed: for each, whether its commit waited
 * for the next turn of the event loop (a `setImmediate` queued before it ran first) or flushed in a microtask.
 */
async function immediateRanBeforeCommit(deterministicFlush: boolean): Promise<boolean[]> {
  const store = await openSqliteEventStore({
    path: join(dir.path, `runtime-${deterministicFlush}.sqlite3`),
    registry: testEventRegistry,
    projectors: [counterProjector],
    synchronous: 'NORMAL',
    deterministicFlush,
  });
  try {
    const append = (v: number) =>
      store.append({
        streamType: 'counter',
        streamId: 'lone',
        expectedVersion: v === 0 ? 'no_stream' : v,
        events: [{ type: 'test.incremented', data: { by: 1 } }],
      });
    await append(0);
    const waited: boolean[] = [];
    for (let v = 1; v <= 20; v++) {
      let immediate = false;
      setImmediate(() => {
        immediate = true;
      });
      await append(v);
      waited.push(immediate);
    }
    return waited;
  } finally {
    await store.close();
  }
}

it('deterministicFlush: a commit always waits for the next turn of the loop, never the timing-dependent microtask shortcut', async () => {
  expect(await immediateRanBeforeCommit(true)).toEqual(Array(20).fill(true));
  // The default keeps the shortcut: a lone caller's commit in a microtask when the loop turned < 2 ms ago.
  expect(await immediateRanBeforeCommit(false)).toContain(false);
});
