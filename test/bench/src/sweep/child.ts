import { benchConcurrentClaims } from '../claim-bench.js';
import { benchSizes } from '../config.js';
import { probeCommitMicros } from '../disk-probe.js';
import { benchVersusEmmett } from '../emmett-bench.js';
import { benchInFlightVsBatched } from '../group-commit-bench.js';
import { benchClaimSucceed } from '../work-bench.js';

/** What one sweep child measured at the fsync latency its parent gave it (see main.ts). */
export interface SweepPoint {
  /** The delay the shim added to every fsync, µs. */
  readonly delayUs: number;
  /** The disk probe: a one-row `FULL` commit, median, µs (the latency the rows actually saw). */
  readonly probeUs: number;
  /** Null when Emmett could not run here (it rides on the native `sqlite3` package; main.ts says why). */
  readonly emmett: number | null;
  readonly oneWorker: number;
  readonly inFlight: number;
  readonly workers8: number;
  readonly workers8NoFsync: number;
  readonly workers8VsRaw8: number;
}

/**
 * The rows of issue 16 whose ratio moves with the disk, run in this process at the fsync latency the parent set
 * (LD_PRELOAD shim, TMPDIR on a tmpfs), at the sizes of `BENCH_SIZE`. Prints one JSON {@link SweepPoint}.
 */
async function main(): Promise<void> {
  const sizes = benchSizes();
  const probeUs = await probeCommitMicros();
  const em = await benchVersusEmmett(sizes.sequentialFull, sizes.streams).catch((err: unknown) => {
    console.error(`Emmett SQLite could not run here: ${(err as Error).message}`);
    return undefined;
  });
  const one = await benchClaimSucceed(sizes.workItems, sizes.workWarmup);
  const inFlight = await benchInFlightVsBatched(sizes.concurrentRounds);
  const burst = await benchConcurrentClaims(sizes.workItems, sizes.workWarmup);
  const point: SweepPoint = {
    delayUs: Number(process.env.FSYNC_DELAY_US ?? 0),
    probeUs,
    emmett: em ? em.store / em.emmett : null,
    oneWorker: one.store / one.raw,
    inFlight: inFlight.store / inFlight.raw,
    workers8: burst.workers8 / burst.raw1,
    workers8NoFsync: burst.workers8NoFsync / burst.raw1,
    workers8VsRaw8: burst.workers8 / burst.raw8,
  };
  console.log(JSON.stringify(point));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
