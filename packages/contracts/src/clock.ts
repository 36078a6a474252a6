/** The port time comes from. Tests use a fake clock (`@demiurge/testkit`). */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };
