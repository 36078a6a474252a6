import type { EventRegistry, RecordedEvent } from '@demiurge/contracts';
import { Observable, Subject } from 'rxjs';
import { decodeRow, type LogStatements } from './event-rows.js';

/**
 * Publishes committed events in position order on an rxjs stream: this process's commits as they
 * happen, and (while anyone subscribes) other processes' commits found by polling `PRAGMA data_version`.
 * A gap before a local commit (another process wrote in between) is read from the log first.
 */
export class LogPublisher {
  private readonly live = new Subject<RecordedEvent>();
  private lastPublished = 0;
  private tailDataVersion = -1;
  private watchers = 0;
  private tailTimer: NodeJS.Timeout | undefined;
  readonly events$: Observable<RecordedEvent>;

  constructor(
    private readonly stmts: LogStatements,
    private readonly registry: EventRegistry,
    private readonly tailIntervalMs: number,
    /** False while the store is closed or committing: the tail then waits for its next tick. */
    private readonly canRead: () => boolean,
    /** What a reading error becomes for subscribers (the store's fail-stop). */
    private readonly mapError: (err: unknown) => unknown = (err) => err,
  ) {
    this.events$ = new Observable<RecordedEvent>((subscriber) => {
      const sub = this.live.subscribe(subscriber);
      if (this.watchers++ === 0) this.startTail();
      return () => {
        sub.unsubscribe();
        if (--this.watchers === 0) this.stopTail();
      };
    });
  }

  /** Everything up to the current head counts as published (history is read by catch-up subscriptions). */
  start(): void {
    this.lastPublished = this.stmts.head.get()!;
    this.tailDataVersion = this.stmts.dataVersion.get()!;
  }

  /** Publishes a local commit's events (after the commit), reading any gap before them from the log. */
  publish(events: readonly RecordedEvent[]): void {
    if (events.length === 0) return;
    if (this.watchers === 0) {
      this.lastPublished = events[events.length - 1]!.position;
      return;
    }
    this.publishFromLog(events[0]!.position - 1);
    for (const event of events) this.emit(event);
  }

  complete(): void {
    this.stopTail();
    this.live.complete();
  }

  private emit(event: RecordedEvent): void {
    if (event.position <= this.lastPublished) return;
    this.lastPublished = event.position;
    this.live.next(event);
  }

  /** Publishes committed events up to `upTo` that this process has not published (other processes'). */
  private publishFromLog(upTo: number): void {
    while (this.lastPublished < upTo) {
      const rows = this.stmts.after.all(this.lastPublished, upTo, 500);
      if (rows.length === 0) return;
      for (const row of rows) this.emit(decodeRow(this.registry, row));
    }
  }

  private startTail(): void {
    if (this.canRead()) {
      this.lastPublished = Math.max(this.lastPublished, this.stmts.head.get()!);
      this.tailDataVersion = this.stmts.dataVersion.get()!;
    }
    this.tailTimer = setInterval(() => this.tail(), this.tailIntervalMs);
    this.tailTimer.unref();
  }

  private stopTail(): void {
    if (this.tailTimer) clearInterval(this.tailTimer);
    this.tailTimer = undefined;
  }

  private tail(): void {
    if (!this.canRead()) return;
    try {
      const version = this.stmts.dataVersion.get()!;
      if (version === this.tailDataVersion) return;
      this.tailDataVersion = version;
      this.publishFromLog(Number.MAX_SAFE_INTEGER);
    } catch (err) {
      this.live.error(this.mapError(err));
    }
  }
}
