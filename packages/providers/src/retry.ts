import { backoffMs } from '@demiurge/contracts';
/** Statuses worth another attempt: rate limiting and server errors. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/**
 * The wait before retry number `retry` (0-based): exponential from `baseMs` with equal jitter
 * (half fixed, half random), or the server's `Retry-After` when it sent one; both capped at `maxMs`.
 */
export function retryDelayMs(
  retry: number,
  options: { baseMs: number; maxMs: number; retryAfterMs?: number | undefined; random?: () => number },
): number {
  if (options.retryAfterMs !== undefined) return Math.min(options.retryAfterMs, options.maxMs);
  const grown = backoffMs(retry + 1, {
    baseMs: options.baseMs,
    maxMs: Number.POSITIVE_INFINITY,
    jitter: 'equal',
    ...(options.random ? { random: options.random } : {}),
  });
  return Math.min(grown, options.maxMs);
}

/**
 * Reads `retry-after-ms` (OpenAI's) or `Retry-After` (seconds or an HTTP date) into milliseconds;
 * `undefined` when absent or unreadable.
 */
export function parseRetryAfter(headers: Headers, now: number = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Number(ms);
  const value = headers.get('retry-after')?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
