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

it('a burst of commands yields to the event loop (every flush, or every 2 ms for a lone caller): a 1 ms timer keeps firing', async () => {
  const store = await openSqliteEventStore({
    path: join(dir.path, 'runtime.sqlite3'),
    registry: testEventRegistry,
    projectors: [counterProjector],
    synchronous: 'NORMAL',
  });
  try {
    let fired = 0;
    const timer = setInterval(() => fired++, 1);
    const cpuAtStart = process.cpuUsage();
    // Each command awaits the previous one: before, a commit resolved in a microtask and the next command
    // queued at once, so the loop never reached its timers phase until the burst ended.
    for (let i = 0; i < 300; i++) {
      await store.append({
        streamType: 'counter',
        streamId: 'burst',
        expectedVersion: i === 0 ? 'no_stream' : i,
        events: [{ type: 'test.incremented', data: { by: 1 } }],
      });
    }
    const cpu = process.cpuUsage(cpuAtStart);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    clearInterval(timer);
    expect(fired).toBeGreaterThan(0);
    // A timer due every millisecond fires at least once every 20 ms of the burst's CPU time (loose; capped, since
    // a loop turn per commit is the most it can get). CPU time, not wall time: on a loaded machine the process
    // waits for a core between turns (the CI run of 2026-12-02: 45 fires in over a second of wall time), which no
    // scheduling of the writer can turn into loop turns.
    expect(fired).toBeGreaterThanOrEqual(Math.min(50, Math.floor(cpuMs / 20)));
  } finally {
    await store.close();
  }
});
