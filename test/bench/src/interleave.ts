/** One side of a comparison: does `n` operations. */
export type Workload = (n: number) => Promise<void>;

export interface Throughput {
  /** Operations per second of the first workload. */
  readonly a: number;
  /** Operations per second of the second workload. */
  readonly b: number;
}

/**
 * Runs two workloads `total` operations each, after a warm-up, alternating in `rounds` chunks so
 * that drift of the machine (page cache, disk, other load) falls on both sides alike. The order alternates
 * too (a b, b a, a b, ...): with a always first, the same raw loop on both sides measured the first side at
 * 0.89–1.02 of the second (mean 0.96 in six runs of the 100-in-flight raw workload, 2026-12-02), a bias against
 * whichever side the bench names first, which is the runtime's in every row.
 */
export async function interleave(a: Workload, b: Workload, total: number, rounds = 4, warmup = 0): Promise<Throughput> {
  if (warmup > 0) {
    await a(warmup);
    await b(warmup);
  }
  const chunk = Math.ceil(total / rounds);
  let aMs = 0;
  let bMs = 0;
  for (let done = 0, round = 0; done < total; done += chunk, round++) {
    const n = Math.min(chunk, total - done);
    if (round % 2 === 0) {
      aMs += await timed(() => a(n));
      bMs += await timed(() => b(n));
    } else {
      bMs += await timed(() => b(n));
      aMs += await timed(() => a(n));
    }
  }
  return { a: (total * 1000) / aMs, b: (total * 1000) / bMs };
}

/** Milliseconds `work` took. */
export async function timed(work: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}
