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
 * that drift of the machine (page cache, disk, other load) falls on both sides alike.
 */
export async function interleave(a: Workload, b: Workload, total: number, rounds = 4, warmup = 0): Promise<Throughput> {
  if (warmup > 0) {
    await a(warmup);
    await b(warmup);
  }
  const chunk = Math.ceil(total / rounds);
  let aMs = 0;
  let bMs = 0;
  for (let done = 0; done < total; done += chunk) {
    const n = Math.min(chunk, total - done);
    aMs += await timed(() => a(n));
    bMs += await timed(() => b(n));
  }
  return { a: (total * 1000) / aMs, b: (total * 1000) / bMs };
}

/** Milliseconds `work` took. */
export async function timed(work: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}
