import type { RecordedEvent } from '@demiurge/contracts';
import type { SubscribeOptions } from '@demiurge/event-store';
import { catchUpSubscription } from '@demiurge/event-store/adapter';
import { Observable } from 'rxjs';

/**
 * `EventStore.subscribe` for this store: from `options.from` (default: after the head when subscribed), the log
 * read by position in batches, then the live events, without a gap or a repeat between the two.
 */
export function subscribeFrom(
  source: {
    head(): Promise<number>;
    readRange(from: number, limit: number, types: readonly string[] | undefined): Promise<RecordedEvent[]>;
    events$: Observable<RecordedEvent>;
  },
  options?: SubscribeOptions,
): Observable<RecordedEvent> {
  return new Observable<RecordedEvent>((subscriber) => {
    let inner: { unsubscribe(): void } | undefined;
    let done = false;
    (async () => {
      const from = options?.from ?? (await source.head()) + 1;
      if (done) return;
      inner = catchUpSubscription(
        (start, limit) => source.readRange(start, limit, options?.types),
        source.events$,
        from,
        options?.types,
      ).subscribe(subscriber);
    })().catch((err: unknown) => subscriber.error(err));
    return () => {
      done = true;
      inner?.unsubscribe();
    };
  });
}
