/** A small seeded PRNG (mulberry32): the kill moments and the workload choices of a crash run. */
export interface Prng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  /** One of `items`. */
  pick<T>(items: readonly T[]): T;
}

export function createPrng(seed: number): Prng {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => items[Math.floor(next() * items.length)]!,
  };
}

/** `CRASH_SEED` when set (a whole number), else a fresh one; print it so a failure can be replayed. */
export function crashSeed(env: NodeJS.ProcessEnv = process.env): number {
  const given = env.CRASH_SEED;
  if (given !== undefined && given !== '') {
    const seed = Number(given);
    if (!Number.isSafeInteger(seed) || seed < 0)
      throw new Error(`CRASH_SEED must be a whole number >= 0, not ${given}`);
    return seed;
  }
  return Math.floor(Math.random() * 2 ** 31);
}
