/**
 * When to try a delivery again: the delay in ms before attempt `attempt + 1` after attempt `attempt`
 * (1-based, the work item's claim count) failed, or `undefined` to give up (the failure is final).
 * @example
 * const everyMinuteFiveTimes: RetryPolicy = (attempt) => (attempt < 5 ? 60_000 : undefined);
 */
export type RetryPolicy = (attempt: number) => number | undefined;

export interface ExponentialBackoffOptions {
  /** Delay after the first attempt. Default 1 s. */
  readonly initialMs?: number;
  /** Growth per attempt. Default 2. */
  readonly factor?: number;
  /** Ceiling of one delay. Default 5 min. */
  readonly maxMs?: number;
  /** Attempts in all (the first included); after the last one the failure is final. Default 8. */
  readonly maxAttempts?: number;
}

/**
 * Exponential backoff without jitter (deterministic, so a replayed log and a fake clock agree):
 * `initialMs * factor^(attempt-1)`, at most `maxMs`, for `maxAttempts` attempts.
 *
 * @example
 * const retry = exponentialBackoff({ initialMs: 1_000, maxAttempts: 3 });
 * [retry(1), retry(2), retry(3)]; // [1000, 2000, undefined]
 */
export function exponentialBackoff(options: ExponentialBackoffOptions = {}): RetryPolicy {
  const initialMs = options.initialMs ?? 1_000;
  const factor = options.factor ?? 2;
  const maxMs = options.maxMs ?? 300_000;
  const maxAttempts = options.maxAttempts ?? 8;
  if (!(initialMs >= 0 && factor >= 1 && maxMs >= initialMs && Number.isInteger(maxAttempts) && maxAttempts >= 1)) {
    throw new RangeError(
      `exponentialBackoff: need initialMs >= 0, factor >= 1, maxMs >= initialMs and an integer maxAttempts >= 1`,
    );
  }
  return (attempt) => (attempt >= maxAttempts ? undefined : Math.min(maxMs, initialMs * factor ** (attempt - 1)));
}

/**
 * Adapter failures: 1 s, 2 s, 4 s... up to 5 min, 8 attempts in all.
 * @example
 * defaultRetryPolicy(1); // 1000
 */
export const defaultRetryPolicy: RetryPolicy = exponentialBackoff();

/**
 * No live route: 5 s, 10 s... up to 10 min, 20 attempts in all (about two hours), then final.
 * @example
 * defaultUnroutedRetryPolicy(20); // undefined: the delivery stays unrouted and its work item fails for good
 */
export const defaultUnroutedRetryPolicy: RetryPolicy = exponentialBackoff({
  initialMs: 5_000,
  maxMs: 600_000,
  maxAttempts: 20,
});
