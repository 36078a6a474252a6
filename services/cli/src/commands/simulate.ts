import { resolve } from 'node:path';
import { describeStore } from '@demiurge/host';
import { renderSimulateReport, type SimStore, simulate } from '@demiurge/testkit';
import { ExitCode, UsageError } from '../cli-errors.js';
import { coreProblem } from '../core-dir.js';
import type { CommandIo } from '../io.js';

/** The options of `demiurge simulate`, as commander parsed them. */
export interface SimulateCliOptions {
  readonly core?: string;
  readonly seeds: number;
  readonly seed: number;
  readonly maxActions: number;
  /** A PostgreSQL database: each scenario runs in a fresh schema of it. */
  readonly storeUrl?: string;
  readonly json: boolean;
  /** Hidden: a deliberately broken delivery sink, to see how a failure is reported. */
  readonly injectBug?: 'ack-before-send' | 'double-send';
}

const BUGS = { 'ack-before-send': 'ackBeforeSend', 'double-send': 'doubleSend' } as const;

/**
 * `demiurge simulate`: runs `seeds` scenarios from `seed` on the given core (or the bundled one), each on a
 * fresh SQLite file or (`--store-url`) a fresh schema of a PostgreSQL database, and prints a report (with
 * `--json`, one document with each run's and the batch's log hash). Exit 1 when any failed.
 */
export async function simulateCommand(o: SimulateCliOptions, io: CommandIo): Promise<ExitCode> {
  const core = o.core === undefined ? undefined : resolve(o.core);
  if (core) {
    const problem = coreProblem(core);
    if (problem) throw new UsageError(`--core: ${problem}`);
  }
  if (o.storeUrl !== undefined && !/^postgres(ql)?:\/\/./.test(o.storeUrl)) {
    throw new UsageError(`--store-url must be a postgres:// or postgresql:// URL, not "${o.storeUrl}"`);
  }
  const store: SimStore = o.storeUrl === undefined ? { kind: 'sqlite' } : { kind: 'postgres', url: o.storeUrl };
  const report = await simulate({
    store,
    seeds: o.seeds,
    seed: o.seed,
    maxActions: o.maxActions,
    ...(core ? { core } : {}),
    ...(o.injectBug ? { bug: BUGS[o.injectBug] } : {}),
    ...(o.json || !io.progress
      ? {}
      : { onRun: (run) => io.progress?.write(`\rseed ${run.seed}: ${run.ok ? 'ok' : 'FAILED'}   `) }),
  });
  if (!o.json && io.progress) io.progress.write('\n');
  if (o.json) {
    // The store: "sqlite", or the PostgreSQL database without its password.
    const where = store.kind === 'postgres' ? describeStore(store) : 'sqlite';
    io.out(JSON.stringify({ core: core ?? null, store: where, ...report }));
  } else {
    for (const line of renderSimulateReport(report, core ?? 'the bundled core', { store })) io.out(line);
  }
  return report.ok ? ExitCode.ok : ExitCode.failure;
}
