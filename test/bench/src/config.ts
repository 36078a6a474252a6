/** Workload sizes; `BENCH_SIZE=small` shrinks every one of them for CI. */
export interface BenchSizes {
  readonly label: 'full' | 'small';
  /** Sequential single-event appends per side (store, raw) with synchronous=FULL. */
  readonly sequentialFull: number;
  /** Sequential single-event appends per side with synchronous=NORMAL. */
  readonly sequentialNormal: number;
  /** Streams the sequential appends go round. */
  readonly streams: number;
  /** Rounds of 100 appends in flight (store side of the group-commit benchmark). */
  readonly concurrentRounds: number;
  /** One-row transactions of the raw side of the group-commit benchmark. */
  readonly concurrentRaw: number;
  /** Events in the large rebuild (timed, and the numerator of the RSS ratio). */
  readonly rebuildLarge: number;
  /** Events in the small rebuild (the denominator of the RSS ratio). */
  readonly rebuildSmall: number;
  /** Alternating raw/store rebuilds of the large log; their times are summed, the peak RSS is the highest. */
  readonly rebuildRepeats: number;
  /** Work items per side through claim then succeed (one worker). */
  readonly workItems: number;
  /**
   * Claim-then-succeed items each side runs before it is timed (one worker, and again through eight). The claim
   * path is new to V8 when these rows start (the rows before them warmed the append path only): in a fresh
   * process an item took about 1,700 µs for its first 1,200 or so and 800-850 µs from then on (2026-12-03,
   * 200-item chunks, FULL), and a second store in the same process ran at 850 µs from its first item. With 100
   * items of warm-up the row timed mostly V8's tier-up, not the runtime.
   */
  readonly workWarmup: number;
  /** Work items four processes share in the contention run. */
  readonly workItemsContended: number;
  /** Timed runs of each start-up figure (the median is reported). */
  readonly startupRuns: number;
  /** Events in the home `demiurge status` is timed on. */
  readonly statusEvents: number;
}

export const IN_FLIGHT = 100;

// Issue 16's targets for the rows whose ratio moves with the disk (main.ts and the fsync sweep both read them).
export const EMMETT_TARGET = 3;
export const WORK_TARGET = 0.5;
export const IN_FLIGHT_VS_BATCHED_TARGET = 0.8;
export const WORKERS8_VS_RAW1_TARGET = 2;
export const WORKERS8_VS_RAW8_TARGET = 0.25;

const FULL: BenchSizes = {
  label: 'full',
  sequentialFull: 10_000,
  sequentialNormal: 50_000,
  streams: 1_000,
  concurrentRounds: 200,
  concurrentRaw: 5_000,
  rebuildLarge: 1_000_000,
  rebuildSmall: 100_000,
  rebuildRepeats: 2,
  workItems: 2_000,
  workWarmup: 1_500,
  workItemsContended: 4_000,
  startupRuns: 10,
  statusEvents: 100_000,
};

const SMALL: BenchSizes = {
  label: 'small',
  sequentialFull: 1_000,
  sequentialNormal: 5_000,
  streams: 100,
  concurrentRounds: 20,
  concurrentRaw: 1_000,
  // Peak RSS only settles after ~40k events (V8 touching its committed heap, store and raw loop
  // alike), so the small ratio compares 100k with 20k rather than sizes still in that warm-up.
  rebuildLarge: 100_000,
  rebuildSmall: 20_000,
  rebuildRepeats: 1,
  workItems: 300,
  workWarmup: 100,
  workItemsContended: 400,
  startupRuns: 5,
  statusEvents: 10_000,
};

export function benchSizes(env: NodeJS.ProcessEnv = process.env): BenchSizes {
  const size = env.BENCH_SIZE ?? 'full';
  if (size === 'small') return SMALL;
  if (size === 'full' || size === '') return FULL;
  throw new Error(`BENCH_SIZE must be "small" or "full", not ${JSON.stringify(size)}`);
}

/** 1_000_000 → "1M", 20_000 → "20k". */
export function countLabel(n: number): string {
  if (n >= 1_000_000 && n % 1_000_000 === 0) return `${n / 1_000_000}M`;
  if (n >= 1_000 && n % 1_000 === 0) return `${n / 1_000}k`;
  return String(n);
}
