import { type HostScenario, hostDriver } from '@demiurge/cli';
import { formatSweepResult, type SweepResult, sweepCrashPoints } from '@demiurge/crash-sweep';

/** `CRASH_SWEEP_FULL=1`: every crash point of every scenario (no sample). */
export const FULL = process.env.CRASH_SWEEP_FULL === '1';
export const SWEEP_TIMEOUT = FULL ? 3 * 60 * 60_000 : 20 * 60_000;

/**
 * Sweeps a scenario on the real host and prints each point and the result. `sample`: the CI's deterministic
 * sample (overridden by `CRASH_SWEEP_SAMPLE`, ignored with `CRASH_SWEEP_FULL=1`); undefined: every point,
 * whatever the environment says.
 */
export async function sweepScenario(scenario: HostScenario, sample: number | undefined): Promise<SweepResult> {
  const override = process.env.CRASH_SWEEP_SAMPLE;
  const chosen = FULL || sample === undefined ? undefined : override !== undefined ? Number(override) : sample;
  const result = await sweepCrashPoints({
    scenario,
    driver: hostDriver({ keep: process.env.CRASH_KEEP === '1' }),
    ...(chosen === undefined ? {} : { sample: chosen }),
    onPoint: (p) =>
      console.log(
        `  ${scenario.name} ${p.label}: ${p.reached ? '' : 'not reached, '}${p.problems.length} problems, ${(p.durationMs / 1000).toFixed(1)} s`,
      ),
  });
  console.log(formatSweepResult(result));
  return result;
}
