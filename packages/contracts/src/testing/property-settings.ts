/**
 * fast-check settings shared by every property test: a fixed seed under CI (or `FC_SEED`), a random
 * one elsewhere; fast-check prints the seed and path of any failure so it can be replayed with `FC_SEED`.
 */
export function propertySettings(numRuns = 100): { seed: number; numRuns: number; verbose: 1 } {
  const env = globalThis.process?.env ?? {};
  const fromEnv = env.FC_SEED === undefined ? undefined : Number(env.FC_SEED);
  const seed = fromEnv ?? (env.CI ? 20261129 : Math.floor(Math.random() * 2 ** 31));
  const runs = env.FC_NUM_RUNS === undefined ? numRuns : Number(env.FC_NUM_RUNS);
  return { seed, numRuns: runs, verbose: 1 };
}
