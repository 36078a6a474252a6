import { type EventStore, type PollLoop, pollLoop } from '@demiurge/event-store';
import type { DispatchOutcome } from './claim-dispatch.js';
import type { DeliveryRuntime } from './delivery-runtime.js';

export interface BackgroundDispatcherOptions {
  readonly runtime: Pick<DeliveryRuntime, 'dispatchDue'>;
  /** Pause between rounds when nothing woke it. Default 1 s. */
  readonly intervalMs?: number;
  /** Deliveries claimed per round. Default 16. */
  readonly limit?: number;
  /** Every error of a round (the loop goes on). Required: a background loop must not swallow errors. */
  readonly onError: (err: unknown) => void;
  /**
   * Committed events (a store's `events$`): a round starts at once on any of `wakeOn`. On PostgreSQL `events$`
   * carries every host's commits, so a delivery another host queued is sent without waiting for `intervalMs`.
   */
  readonly events$?: EventStore['events$'];
  /** Event types that start a round at once. Default `['delivery.queued']` when `events$` is given. */
  readonly wakeOn?: readonly string[];
  /** Called with the outcomes of each round that dispatched something. */
  readonly onDispatched?: (outcomes: readonly DispatchOutcome[]) => void;
}

/**
 * Calls `dispatchDue` every `intervalMs` and whenever {@link wake} is called (a delivery was queued, a
 * route was bound). A full round is followed at once by another. {@link close} stops the loop and waits
 * for the sends in flight to finish and be recorded (it does not abort them).
 *
 * @example
 * const dispatcher = new BackgroundDispatcher({ runtime: delivery, onError: (e) => log.error(e) }).start();
 * await host.enqueueDelivery(spec, [messageStream]);
 * dispatcher.wake();
 * await dispatcher.close();
 */
export class BackgroundDispatcher {
  private loop: PollLoop | undefined;
  private closed = false;

  constructor(private readonly options: BackgroundDispatcherOptions) {}

  /** Starts the loop (once; later calls do nothing). */
  start(): this {
    if (this.closed) throw new Error('BackgroundDispatcher: start after close');
    const limit = this.options.limit ?? 16;
    this.loop ??= pollLoop({
      intervalMs: this.options.intervalMs ?? 1_000,
      onError: this.options.onError,
      round: async () => {
        const outcomes = await this.options.runtime.dispatchDue({ limit });
        if (outcomes.length > 0) this.options.onDispatched?.(outcomes);
        return outcomes.length;
      },
      again: (dispatched) => dispatched >= limit,
      ...(this.options.events$
        ? { events$: this.options.events$, wakeOn: this.options.wakeOn ?? ['delivery.queued'] }
        : {}),
    });
    return this;
  }

  /** Runs a round now (or right after the current one). */
  wake(): void {
    this.loop?.wake();
  }

  /** Stops the loop and waits for the round in flight, so every started send has its outcome recorded. */
  async close(): Promise<void> {
    this.closed = true;
    await this.loop?.close();
  }
}
