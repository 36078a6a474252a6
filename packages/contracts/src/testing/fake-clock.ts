import type { Clock } from '../clock.js';

/** A clock that moves only when told to. */
export interface FakeClock extends Clock {
  advance(ms: number): number;
  set(ms: number): void;
}

/**
 * @example
 * const clock = createFakeClock(Date.parse('2026-01-01T00:00:00Z'));
 * clock.advance(30_000);
 */
export function createFakeClock(start = Date.parse('2026-01-01T00:00:00.000Z')): FakeClock {
  let now = start;
  return {
    now: () => now,
    advance(ms) {
      if (ms < 0) throw new RangeError('a fake clock does not go backwards');
      now += ms;
      return now;
    },
    set(ms) {
      now = ms;
    },
  };
}
