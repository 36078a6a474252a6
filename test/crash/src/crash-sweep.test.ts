import { cancelScenario, deliveryScenario, hostDriver, turnScenario } from '@demiurge/cli';
import { formatSweepResult, sweepCrashPoints } from '@demiurge/crash-sweep';
import { describe, expect, it } from 'vitest';
import { SWEEP_TIMEOUT, sweepScenario } from './sweep/sweep-run.js';

/**
 * The crash-point sweep on the real host (docs/crash-sweep.md; the driver and the scenarios are those of
 * `demiurge sweep`, exported by @demiurge/cli): every crash point of the small scenarios (a
 * delivery, a cancel); `crash-sweep-sampled.test.ts` runs a deterministic sample of the bigger ones.
 * `CRASH_SWEEP_FULL=1` runs every point of every scenario.
 */
describe('crash-point sweep: the host SIGKILLed right before and right after each commit of a scenario', () => {
  for (const scenario of [deliveryScenario, cancelScenario]) {
    it(
      `${scenario.name}: every crash point, restarted: verify passes, nothing twice, nothing acknowledged lost`,
      async () => {
        const result = await sweepScenario(scenario, undefined);
        expect(result.problems).toEqual([]);
        expect(result.full).toBe(true);
        expect(result.covered).toBeGreaterThan(result.planned * 0.8);
      },
      SWEEP_TIMEOUT,
    );
  }
});

describe('the sweep can fail', () => {
  it(
    'a host that answers a submit before committing it (DEMIURGE_INJECT_BUG=ack-before-commit) is caught at the crash point before that commit',
    async () => {
      const result = await sweepCrashPoints({
        scenario: turnScenario,
        driver: hostDriver({ injectBug: 'ack-before-commit', settleMs: 10_000 }),
        // The commits that admit a turn, crashed right before: the acknowledged turn is not in the log.
        select: (point, commit) => point.phase === 'before' && commit?.types.includes('turn.started') === true,
        sample: 1,
      });
      console.log(formatSweepResult(result));
      expect(result.covered).toBe(1);
      const lost = result.problems.filter((p) => p.check === 'acknowledged submit lost');
      expect(lost.length).toBeGreaterThan(0);
      expect(lost[0]!.point).toMatch(/^\d+:before commit \d+ before \(.*turn\.started/);
      expect(lost[0]!.detail).toMatch(/of an acknowledged submit has no events/);
    },
    SWEEP_TIMEOUT,
  );
});
