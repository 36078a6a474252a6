import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFakeClock, createSeededIdGenerator } from '@demiurge/contracts/testing';
import { hostProjectors, openHostStore } from '@demiurge/host';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { deliveryWalk, MachineWalk, rebuildDifferences, StepChecker, steps, taskWalk } from '../src/index.js';

// The machine walks are shipped by the test kit with the checks: a walk's log, appended to a real SQLite
// store with the host's projectors, follows every machine and rebuilds to the same read models.
it('machine walks (tasks, deliveries) through the test kit: every stream follows its machine, projections equal a rebuild', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'demiurge-walk-'));
  try {
    const clock = createFakeClock();
    const ids = createSeededIdGenerator(clock, 3);
    const store = await openHostStore(
      { kind: 'sqlite', path: join(dir, 'walk.sqlite3'), synchronous: 'NORMAL' },
      { projectors: hostProjectors, clock, ids },
    );
    try {
      const sessions = [ids.next('ses')];
      const walks = [
        new MachineWalk(taskWalk(ids, sessions), ids, 2),
        new MachineWalk(deliveryWalk(ids, sessions), ids, 2),
      ];
      const [walkSteps] = fc.sample(steps(2), { seed: 11, numRuns: 1 });
      for (const [i, s] of (walkSteps ?? []).entries()) {
        clock.advance(s.delay);
        const { streamType, streamId, event } = walks[i % 2]!.next(s, clock.now());
        await store.append({ streamType, streamId, expectedVersion: 'any', events: [event] });
      }
      const checker = new StepChecker();
      expect(await checker.readNew(store)).toEqual([]);
      expect(checker.events).toBeGreaterThan(5);
      expect(await rebuildDifferences(store)).toEqual([]);
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
