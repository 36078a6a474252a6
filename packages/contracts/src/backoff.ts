/** How a wait grows between attempts: from `baseMs`, doubling, capped at `maxMs`, with a jitter. */
export interface BackoffOptions {
  /** The wait of the first retry before the jitter. */
  readonly baseMs: number;
  /** The cap on one wait before the jitter. */
  readonly maxMs: number;
  /**
   * `full`: uniform in [0, cap), floored (the default: concurrent retriers spread out most); `equal`: half fixed,
   * half random, in [cap/2, cap); `none`: the cap itself (a single waiter, e.g. a reconnect or a restart).
   */
  readonly jitter?: 'full' | 'equal' | 'none';
  /** Uniform in [0, 1) (default `Math.random`). */
  readonly random?: () => number;
}

/**
 * The one exponential backoff of the runtime: the wait before retry `retry` (1-based), where the cap is
 * `min(maxMs, baseMs * 2^(retry-1))`. Used by the command loop's conflict retries, the SQLite group commit's
 * busy retries, the PostgreSQL notification listener's reconnects, MCP server restarts and provider retries.
 * @example
 * backoffMs(3, { baseMs: 2, maxMs: 100, random: () => 0.5 }); // 4 (full jitter of a cap of 8)
 * backoffMs(3, { baseMs: 50, maxMs: 2000, jitter: 'none' }); // 200
 */
export function backoffMs(retry: number, options: BackoffOptions): number {
  const cap = Math.min(options.maxMs, options.baseMs * 2 ** Math.max(0, retry - 1));
  const jitter = options.jitter ?? 'full';
  if (jitter === 'none') return cap;
  const random = (options.random ?? Math.random)();
  return jitter === 'equal' ? cap / 2 + random * (cap / 2) : Math.floor(random * cap);
}
