import { compactionScenario, scheduleScenario, turnScenario } from '@demiurge/cli';
import { describe, expect, it } from 'vitest';
import { FULL, SWEEP_TIMEOUT, sweepScenario } from './sweep/sweep-run.js';

/**
 * The crash-point sweep of the bigger scenarios (docs/crash-sweep.md): in CI a deterministic sample of 8 crash
 * points each (commits evenly spaced, before and after alternating, from the first commit to the last);
 * `CRASH_SWEEP_FULL=1` runs every one, `CRASH_SWEEP_SAMPLE=N` another sample size.
 */
const CI_SAMPLE = 8;

describe('crash-point sweep, sampled: the host SIGKILLed before or after a commit, restarted, checked', () => {
  for (const scenario of [scheduleScenario, turnScenario, compactionScenario]) {
    it(
      `${scenario.name}: restarted after each sampled crash point, verify passes, nothing twice, nothing acknowledged lost`,
      async () => {
        const result = await sweepScenario(scenario, CI_SAMPLE);
        expect(result.problems).toEqual([]);
        expect(result.commits).toBeGreaterThan(5);
        expect(result.full).toBe(FULL);
        expect(result.covered).toBeGreaterThanOrEqual(Math.ceil(result.planned * 0.75));
      },
      SWEEP_TIMEOUT,
    );
  }
});
