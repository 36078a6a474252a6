/** The port time comes from. Tests use a fake clock (`@demiurge/testkit`). */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

let lastIsoMs = Number.NaN;
let lastIso = '';

/**
 * `new Date(ms).toISOString()`, remembered for the last millisecond asked: a burst of commands stamps many
 * times per millisecond (a claim's "now" two or three times), and formatting costs more than the comparison.
 * @example
 * isoTime(0); // '1970-01-01T00:00:00.000Z'
 */
export function isoTime(ms: number): string {
  if (ms !== lastIsoMs) {
    lastIso = new Date(ms).toISOString();
    lastIsoMs = ms;
  }
  return lastIso;
}

/**
 * The port timeouts come from, in the time of a {@link Clock}: the wall clock's timers in a host, a simulation's
 * virtual time in tests (`@demiurge/testkit`: a timer fires when the virtual clock is advanced past it).
 * @example
 * const cancel = systemTimers.after(15 * 60_000, () => expire());
 * cancel(); // answered in time
 */
export interface Timers {
  /**
   * Calls `callback` once, `ms` from now (0 or less: as soon as possible); returns the function that cancels
   * it. `unref`: the timer does not keep a Node process alive on its own.
   */
  after(ms: number, callback: () => void, options?: { readonly unref?: boolean }): () => void;
}

/** The wall clock's timers (Node's `setTimeout`). */
export const systemTimers: Timers = {
  after(ms, callback, options) {
    const timer = setTimeout(callback, Math.max(0, ms));
    if (options?.unref) timer.unref?.();
    return () => clearTimeout(timer);
  },
};
