import type { RecordedEvent } from '@demiurge/contracts';
import { Observable, Subject } from 'rxjs';

/** The channel every append notifies at commit, with the new head position as payload. */
export const EVENTS_CHANNEL = 'demiurge_events';

/**
 * Publishes committed events in position order on an rxjs stream: this process's commits as they happen, and
 * other processes' commits when their NOTIFY arrives (no polling). Positions are dense and commit in order
 * (the log-head lock), so "everything after the last published position" is always a gap-free prefix: a gap
 * before a local commit, or up to a notified head, is read from the log first. All work runs on one queue.
 */
export class LogPublisher {
  private readonly live = new Subject<RecordedEvent>();
  private lastPublished = 0;
  private watchers = 0;
  private queue: Promise<void> = Promise.resolve();
  readonly events$: Observable<RecordedEvent>;

  constructor(
    /** Reads committed events after `after` up to `upTo` (inclusive), at most `limit`, in position order. */
    private readonly readAfter: (after: number, upTo: number, limit: number) => Promise<RecordedEvent[]>,
  ) {
    this.events$ = new Observable<RecordedEvent>((subscriber) => {
      const sub = this.live.subscribe(subscriber);
      this.watchers++;
      return () => {
        sub.unsubscribe();
        this.watchers--;
      };
    });
  }

  /** Everything up to `head` counts as published (history is read by catch-up subscriptions). */
  start(head: number): void {
    this.lastPublished = Math.max(this.lastPublished, head);
  }

  /** Publishes a local commit's events after the commit; resolves once they (and any gap before them) went out. */
  publish(events: readonly RecordedEvent[]): Promise<void> {
    if (events.length === 0) return Promise.resolve();
    return this.enqueue(async () => {
      if (this.watchers === 0) {
        this.lastPublished = Math.max(this.lastPublished, events[events.length - 1]!.position);
        return;
      }
      await this.publishFromLog(events[0]!.position - 1);
      for (const event of events) this.emit(event);
    });
  }

  /** Another commit (maybe another host's) reached `head`. */
  notified(head: number): void {
    void this.enqueue(async () => {
      if (this.watchers === 0) this.lastPublished = Math.max(this.lastPublished, head);
      else await this.publishFromLog(head);
    });
  }

  /** Waits for the work queued so far. */
  drain(): Promise<void> {
    return this.queue;
  }

  /** Ends the stream with an error (the listening connection was lost). */
  fail(err: unknown): void {
    void this.enqueue(async () => this.live.error(err));
  }

  complete(): void {
    this.live.complete();
  }

  private enqueue(work: () => Promise<void>): Promise<void> {
    const next = this.queue.then(work).catch((err: unknown) => this.live.error(err));
    this.queue = next;
    return next;
  }

  private emit(event: RecordedEvent): void {
    if (event.position <= this.lastPublished) return;
    this.lastPublished = event.position;
    this.live.next(event);
  }

  private async publishFromLog(upTo: number): Promise<void> {
    while (this.lastPublished < upTo) {
      const events = await this.readAfter(this.lastPublished, upTo, 500);
      if (events.length === 0) return;
      for (const event of events) this.emit(event);
    }
  }
}
