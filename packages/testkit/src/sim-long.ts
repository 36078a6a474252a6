// The long run (`pnpm --filter @demiurge/testkit run sim:long`): SIM_SEEDS scenarios (default 100,000) from
// SIM_SEED (default 1) on the bundled core, or SIM_CORE; SIM_REBUILD=end compares projections with a rebuild
// only at each scenario's end (default: after every step); SIM_STORE_URL (a postgres:// database) runs each
// scenario in a fresh schema of it. Prints a line per 1,000 seeds and each failure.
import { renderSimulateReport, simulate } from './batch.js';

const seeds = Number(process.env.SIM_SEEDS ?? 100_000);
const seed = Number(process.env.SIM_SEED ?? 1);
const core = process.env.SIM_CORE;
const rebuild = process.env.SIM_REBUILD === 'end' ? 'end' : 'step';
const url = process.env.SIM_STORE_URL;
const store = url ? ({ kind: 'postgres', url } as const) : ({ kind: 'sqlite' } as const);
const report = await simulate({
  store,
  seeds,
  seed,
  rebuild,
  ...(core ? { core } : {}),
  onRun: (run) => {
    if (!run.ok) console.log(`seed ${run.seed} FAILED: ${run.failure?.problems[0] ?? ''}`);
    else if ((run.seed - seed + 1) % 1_000 === 0) console.log(`${run.seed - seed + 1} of ${seeds} seeds passed`);
  },
});
for (const line of renderSimulateReport(report, core ?? 'the bundled core', { store })) console.log(line);
process.exit(report.ok ? 0 : 1);
