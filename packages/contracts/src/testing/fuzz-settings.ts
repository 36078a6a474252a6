/** The seed every fuzz test runs with unless `FUZZ_SEED` says otherwise (CI and local runs alike). */
export const DEFAULT_FUZZ_SEED = 2121;

/** fast-check parameters of one fuzz property: a fixed seed, a bounded number of runs, a replay path. */
export interface FuzzSettings {
  readonly seed: number;
  readonly numRuns: number;
  readonly path?: string;
  readonly verbose: 1;
}

/**
 * fast-check settings for a fuzz property over an input surface (docs/testing-fuzz.md): the fixed seed
 * {@link DEFAULT_FUZZ_SEED} (or `FUZZ_SEED`), `numRuns` runs (or `FUZZ_RUNS`, for a longer run), and
 * `FUZZ_PATH` to replay one failing case as fast-check printed it. The seed is printed so a run can be
 * repeated; a failure prints the seed, the replay path and the shrunk counterexample.
 *
 * @example
 * ```ts
 * fc.assert(fc.property(frame, check), fuzzSettings('operator frames', 200));
 * ```
 */
export function fuzzSettings(surface: string, numRuns: number): FuzzSettings {
  const env = globalThis.process?.env ?? {};
  const seed = env.FUZZ_SEED === undefined ? DEFAULT_FUZZ_SEED : Number(env.FUZZ_SEED);
  const runs = env.FUZZ_RUNS === undefined ? numRuns : Number(env.FUZZ_RUNS);
  const path = env.FUZZ_PATH;
  globalThis.console?.info(`fuzz ${surface}: FUZZ_SEED=${seed} FUZZ_RUNS=${runs}${path ? ` FUZZ_PATH=${path}` : ''}`);
  return { seed, numRuns: runs, ...(path ? { path } : {}), verbose: 1 };
}
