import { describe, expect, it } from 'vitest';
import { isRetryableStatus, parseRetryAfter, retryDelayMs } from './retry.js';

describe('retry policy', () => {
  it('retries 429 and 5xx only', () => {
    expect([400, 401, 404, 408, 429, 500, 502, 503].filter(isRetryableStatus)).toEqual([429, 500, 502, 503]);
  });

  it('doubles the backoff with jitter between half and all of it, capped', () => {
    const at = (retry: number, random: number) =>
      retryDelayMs(retry, { baseMs: 100, maxMs: 1000, random: () => random });
    expect([at(0, 0), at(0, 1), at(1, 0), at(1, 1), at(2, 0.5), at(5, 1)]).toEqual([50, 100, 100, 200, 300, 1000]);
    expect(retryDelayMs(0, { baseMs: 100, maxMs: 1000, retryAfterMs: 700 })).toBe(700);
    expect(retryDelayMs(0, { baseMs: 100, maxMs: 1000, retryAfterMs: 5000 })).toBe(1000);
  });

  it('reads Retry-After as seconds or an HTTP date, and retry-after-ms first', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter(new Headers({ 'retry-after': '2' }), now)).toBe(2000);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:05 GMT' }), now)).toBe(5000);
    expect(parseRetryAfter(new Headers({ 'retry-after': '2', 'retry-after-ms': '150' }), now)).toBe(150);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(parseRetryAfter(new Headers(), now)).toBeUndefined();
  });
});
