import type { Clock } from '@demiurge/contracts';

/** How a {@link DatabaseClock} samples the server and what it keeps its offset against. */
export interface DatabaseClockOptions {
  /**
   * The local clock the offset is kept against. Default: a monotonic reading
   * (`performance.timeOrigin + performance.now()`), which a wall-clock step (NTP, an operator) does not move.
   * Tests pass a fake clock skewed by minutes: the database clock still reads the server's time.
   */
  readonly local?: Clock;
  /** Round trips per sampling; the one with the shortest round trip is kept (NTP's filter). Default 3. */
  readonly samplesPerSync?: number;
  /** Re-sample in the background every this many ms (0: never; call {@link DatabaseClock.sync}). Default 30 000. */
  readonly resyncMs?: number;
  /** Told when a background re-sampling fails; the clock keeps its last offset. */
  readonly onError?: (error: unknown) => void;
}

/**
 * A {@link Clock} that reads the database server's clock: every host on one database judges leases and due
 * times by the same time, whatever its own clock says. `now()` is synchronous (the `Clock` port is): it is
 * the local reading plus the offset measured at the last sampling. Never goes backwards.
 */
export interface DatabaseClock extends Clock {
  /**
   * The bound of the last sampling: half its round trip, in ms. Right after a sampling, `now()` is within
   * this of the server's `clock_timestamp()`; later, add the local clock's drift since (a few ppm).
   */
  readonly errorBoundMs: number;
  /** Server time minus local time at the last sampling, in ms. */
  readonly offsetMs: number;
  /** Samples the server's clock again now. */
  sync(): Promise<void>;
  /** Stops background re-sampling. */
  close(): void;
}

/** Reads the server's `clock_timestamp()` as epoch milliseconds. */
export type ReadServerMs = () => Promise<number>;

const monotonic: Clock = { now: () => performance.timeOrigin + performance.now() };

/**
 * Builds a {@link DatabaseClock} over a function that reads the server's time (the store's
 * `databaseClock()` passes `SELECT clock_timestamp()` on its pool); resolves after the first sampling.
 *
 * Each sampling reads the local clock before (t0) and after (t1) `n` round trips and keeps the one with the
 * shortest round trip: offset = server − (t0 + t1) / 2, error bound (t1 − t0) / 2.
 *
 * @example
 * const clock = await createDatabaseClock(async () => readEpochMs(pool));
 * clock.now(); // the server's time, to within clock.errorBoundMs
 */
export async function createDatabaseClock(
  read: ReadServerMs,
  options: DatabaseClockOptions = {},
): Promise<DatabaseClock> {
  const local = options.local ?? monotonic;
  const samples = Math.max(1, options.samplesPerSync ?? 3);
  let offsetMs = 0;
  let errorBoundMs = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  let timer: NodeJS.Timeout | undefined;

  const sync = async (): Promise<void> => {
    let best: { offset: number; bound: number } | undefined;
    for (let i = 0; i < samples; i++) {
      const t0 = local.now();
      const server = await read();
      const t1 = local.now();
      const bound = Math.max(0, t1 - t0) / 2;
      if (!best || bound < best.bound) best = { offset: server - (t0 + t1) / 2, bound };
    }
    offsetMs = best!.offset;
    errorBoundMs = best!.bound;
  };

  await sync();
  const resyncMs = options.resyncMs ?? 30_000;
  if (resyncMs > 0) {
    timer = setInterval(() => {
      sync().catch((err: unknown) => options.onError?.(err));
    }, resyncMs);
    timer.unref();
  }
  return {
    now() {
      // A later sampling may find the offset a little smaller: hold the time still rather than go back.
      last = Math.max(last, Math.round(local.now() + offsetMs));
      return last;
    },
    get errorBoundMs() {
      return errorBoundMs;
    },
    get offsetMs() {
      return offsetMs;
    },
    sync,
    close() {
      clearInterval(timer);
    },
  };
}

/** Reads the server's clock (`clock_timestamp()`, in ms since the epoch) on one of the pool's connections. */
export function serverTimeOf(pool: { query<R>(text: string): Promise<{ rows: R[] }> }): () => Promise<number> {
  return async () => {
    const { rows } = await pool.query<{ ms: number }>(
      'SELECT extract(epoch FROM clock_timestamp())::float8 * 1000 AS ms',
    );
    return rows[0]!.ms;
  };
}
