import type { RecordedEvent } from '@demiurge/contracts';
import { Observable } from 'rxjs';

/**
 * A catch-up subscription: history read in batches from `from`, then live events, with no gap and
 * no duplicate. Live events that arrive while history is read are buffered, then those past the
 * last historical position are delivered.
 */
export function catchUpSubscription(
  readBatch: (from: number, limit: number) => Promise<readonly RecordedEvent[]>,
  live$: Observable<RecordedEvent>,
  from: number,
  types: readonly string[] | undefined,
  batchSize = 500,
): Observable<RecordedEvent> {
  const wanted = types ? new Set(types) : undefined;
  return new Observable<RecordedEvent>((subscriber) => {
    let last = from - 1;
    let caughtUp = false;
    const buffer: RecordedEvent[] = [];
    const emit = (event: RecordedEvent) => {
      if (event.position <= last) return;
      last = event.position;
      if (!wanted || wanted.has(event.type)) subscriber.next(event);
    };
    const live = live$.subscribe({
      next: (event) => (caughtUp ? emit(event) : buffer.push(event)),
      error: (err) => subscriber.error(err),
      complete: () => subscriber.complete(),
    });
    (async () => {
      for (;;) {
        const batch = await readBatch(last + 1, batchSize);
        if (subscriber.closed) return;
        for (const event of batch) emit(event);
        if (batch.length < batchSize) break;
      }
      for (const event of buffer) emit(event);
      buffer.length = 0;
      caughtUp = true;
    })().catch((err: unknown) => subscriber.error(err));
    return () => live.unsubscribe();
  });
}

/**
 * Reads the log in keyset batches (`from` inclusive) until a batch comes back short: the shared body
 * of every store's `iterate`, so memory never holds more than one batch.
 */
export async function* iterateInBatches(
  readBatch: (from: number, limit: number) => readonly RecordedEvent[] | Promise<readonly RecordedEvent[]>,
  from: number,
  batchSize: number,
): AsyncIterable<RecordedEvent> {
  for (let next = from; ; ) {
    const batch = await readBatch(next, batchSize);
    yield* batch;
    if (batch.length < batchSize) return;
    next = batch[batch.length - 1]!.position + 1;
  }
}
