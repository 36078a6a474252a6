import { type Clock, systemClock } from '@demiurge/contracts';

/** One tracked background promise that has not settled yet. */
export interface BackgroundItem {
  readonly id: number;
  readonly name: string;
  /** Clock milliseconds when it was tracked. */
  readonly startedAt: number;
}

/** A tracked promise that rejected. */
export interface BackgroundFailure {
  readonly name: string;
  readonly error: unknown;
}

/** What {@link BackgroundWorkRuntime.drain} saw. */
export interface DrainReport {
  /** True when nothing was still running at the end. */
  readonly drained: boolean;
  /** Tracked promises that settled while draining. */
  readonly settled: number;
  /** Rejections not yet reported (by an earlier drain). */
  readonly failed: readonly BackgroundFailure[];
  /** What was still running when the timeout ran out. */
  readonly stillRunning: readonly BackgroundItem[];
}

export interface BackgroundWorkOptions {
  readonly clock?: Clock;
  /** Called with every rejection as it happens (they are also kept for the next {@link BackgroundWorkRuntime.drain}). */
  readonly onError?: (failure: BackgroundFailure) => void;
}

/**
 * Tracks in-process background promises by name (seed 003 BackgroundWorkRuntime): parallel slots, and later
 * delivery dispatch. It never cancels anything; on close the host calls {@link drain} to wait for them and to
 * learn what was still running. A rejection is never lost: `onError` sees it, and the next drain reports it.
 *
 * @example
 * ```ts
 * const background = new BackgroundWorkRuntime();
 * background.track('slot:output/audit_log', auditPromise);
 * const report = await background.drain(5_000);
 * if (!report.drained) console.warn('still running:', report.stillRunning.map((w) => w.name));
 * ```
 */
export class BackgroundWorkRuntime {
  private readonly running = new Map<number, BackgroundItem>();
  private readonly settledWaiters = new Set<() => void>();
  private failures: BackgroundFailure[] = [];
  private nextId = 1;
  private settledCount = 0;
  private readonly clock: Clock;

  constructor(private readonly options: BackgroundWorkOptions = {}) {
    this.clock = options.clock ?? systemClock;
  }

  /** Tracks a promise until it settles; returns it unchanged. */
  track<T>(name: string, promise: Promise<T>): Promise<T> {
    const item: BackgroundItem = { id: this.nextId++, name, startedAt: this.clock.now() };
    this.running.set(item.id, item);
    promise.then(
      () => this.settle(item),
      (error: unknown) => {
        const failure = { name, error };
        this.failures.push(failure);
        this.options.onError?.(failure);
        this.settle(item);
      },
    );
    return promise;
  }

  /** What is running now, oldest first. */
  active(): readonly BackgroundItem[] {
    return [...this.running.values()];
  }

  /**
   * Waits until nothing tracked is running (including work tracked while it waits) or `timeoutMs` passes,
   * then reports what settled, what failed and what was still running.
   */
  async drain(timeoutMs: number): Promise<DrainReport> {
    const before = this.settledCount;
    const deadline = Date.now() + timeoutMs;
    while (this.running.size > 0) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.settledWaiters.add(done);
      });
    }
    const failed = this.failures;
    this.failures = [];
    return {
      drained: this.running.size === 0,
      settled: this.settledCount - before,
      failed,
      stillRunning: this.active(),
    };
  }

  private settle(item: BackgroundItem): void {
    this.running.delete(item.id);
    this.settledCount++;
    const waiters = [...this.settledWaiters];
    this.settledWaiters.clear();
    for (const wake of waiters) wake();
  }
}
