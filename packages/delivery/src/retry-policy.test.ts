import { describe, expect, it } from 'vitest';
import { defaultRetryPolicy, defaultUnroutedRetryPolicy, exponentialBackoff } from './retry-policy.js';

describe('exponentialBackoff', () => {
  it('doubles from the initial delay up to the ceiling, and gives up after maxAttempts', () => {
    const retry = exponentialBackoff({ initialMs: 100, factor: 3, maxMs: 1_000, maxAttempts: 5 });
    expect([1, 2, 3, 4, 5, 6].map(retry)).toEqual([100, 300, 900, 1_000, undefined, undefined]);
  });

  it('has defaults for adapter failures and for missing routes', () => {
    expect([1, 2, 3, 7, 8].map(defaultRetryPolicy)).toEqual([1_000, 2_000, 4_000, 64_000, undefined]);
    expect([1, 2, 8, 19, 20].map(defaultUnroutedRetryPolicy)).toEqual([5_000, 10_000, 600_000, 600_000, undefined]);
  });

  it('refuses settings that make no sense', () => {
    expect(() => exponentialBackoff({ maxAttempts: 0 })).toThrow(RangeError);
    expect(() => exponentialBackoff({ factor: 0.5 })).toThrow(RangeError);
    expect(() => exponentialBackoff({ initialMs: 10, maxMs: 5 })).toThrow(RangeError);
  });
});
