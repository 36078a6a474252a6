import { expect, it } from 'vitest';
import { RESUMED_FROM_PAUSE, renderSimulateReport, simulate } from '../src/index.js';

// The CI batch, part 1 of 2 (the two files run in parallel): seeds 1..1000 of the bundled core, short
// scenarios, projections compared with a rebuild at each scenario's end (every other check after every step).
// About 35 ms of CPU per scenario (35 s per file); the timeout allows for a CI machine busy with other suites.
it('the CI batch of seeds 1..1000 passes every check', async () => {
  const report = await simulate({ seeds: 1_000, seed: 1, maxActions: 6, rebuild: 'end' });
  const lines = renderSimulateReport(report, 'the bundled core');
  console.log(lines.join('\n'));
  expect(report.runs.filter((r) => !r.ok).map((r) => ({ seed: r.seed, failure: r.failure }))).toEqual([]);
  expect(report.scenarios).toBe(1_000);
  // The operator's pauses and resumes and the approvals nobody answered do occur in the batch (counted; the
  // report's "exercised" line prints them).
  const exercised = (type: string) => report.eventTypes[type] ?? 0;
  expect(exercised('run.paused')).toBeGreaterThan(20);
  expect(exercised(RESUMED_FROM_PAUSE)).toBeGreaterThanOrEqual(3);
  expect(exercised('approval.expired')).toBeGreaterThan(5);
}, 900_000);
