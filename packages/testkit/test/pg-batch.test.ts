import { expect, it } from 'vitest';
import { renderSimulateReport, simulate } from '../src/index.js';
import { simPostgres } from './pg-server.js';

// The CI batch on PostgreSQL: seeds 1..60 of the bundled core, each scenario in a fresh schema of a real server
// (started by this file), with the checks of the SQLite batches. About 1 s per scenario on the loaded 2-core
// machine (schema, migration and the lockstep store's round trips), so 60 seeds rather than 1,000.
const { store, describePg } = await simPostgres();

describePg('the simulator on PostgreSQL', () => {
  it('the CI batch of seeds 1..60 passes every check on PostgreSQL', async () => {
    const report = await simulate({ seeds: 60, seed: 1, maxActions: 6, rebuild: 'end', store });
    console.log(renderSimulateReport(report, 'the bundled core', { store }).join('\n'));
    expect(report.runs.filter((r) => !r.ok).map((r) => ({ seed: r.seed, failure: r.failure }))).toEqual([]);
    expect(report.scenarios).toBe(60);
  }, 900_000);
});
