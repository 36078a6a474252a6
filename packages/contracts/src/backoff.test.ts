import { describe, expect, it } from 'vitest';
import { backoffMs } from './backoff.js';

describe('backoffMs', () => {
  it('doubles from the base up to the cap, with the jitter asked for', () => {
    const caps = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffMs(n, { baseMs: 50, maxMs: 2000, jitter: 'none' }));
    expect(caps).toEqual([50, 100, 200, 400, 800, 1600, 2000, 2000]);
    expect(backoffMs(3, { baseMs: 2, maxMs: 100, random: () => 0.5 })).toBe(4);
    expect(backoffMs(3, { baseMs: 2, maxMs: 100, random: () => 0 })).toBe(0);
    expect(backoffMs(4, { baseMs: 10, maxMs: 1000, jitter: 'equal', random: () => 0 })).toBe(40);
    expect(backoffMs(4, { baseMs: 10, maxMs: 1000, jitter: 'equal', random: () => 0.999 })).toBeCloseTo(79.96);
  });

  it('treats a retry below 1 as the first', () => {
    expect(backoffMs(0, { baseMs: 5, maxMs: 100, jitter: 'none' })).toBe(5);
  });
});
