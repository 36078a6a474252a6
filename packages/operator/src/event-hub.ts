import type { Observable, Subscription } from 'rxjs';
import { OperatorErrorCode } from './operator-errors.js';
import { OperatorEvent } from './operator-events.js';
import { encodeFrame } from './protocol.js';

/** Receives one encoded event line. */
export type EventSink = (line: string) => void;

/**
 * Subscribes once to the backend's events and fans each one out to the attached (initialized) clients,
 * validated and encoded once. An event that fails its schema is not sent as is: clients get an
 * `operator.error` (`internal`) naming it, and the host's `onError` gets the details.
 */
export class EventHub {
  private readonly sinks = new Set<EventSink>();
  private readonly subscription: Subscription;

  constructor(
    events$: Observable<OperatorEvent>,
    private readonly onError: (error: unknown) => void,
  ) {
    this.subscription = events$.subscribe({
      next: (event) => this.publish(event),
      error: (error: unknown) => {
        this.onError(error);
        this.broadcastError(
          `the host's event stream failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      },
    });
  }

  /** Attaches a client; returns the detach function. */
  add(sink: EventSink): () => void {
    this.sinks.add(sink);
    return () => this.sinks.delete(sink);
  }

  /** Stops listening to the backend. */
  close(): void {
    this.subscription.unsubscribe();
    this.sinks.clear();
  }

  private publish(event: unknown): void {
    const parsed = OperatorEvent.safeParse(event);
    if (parsed.success) {
      this.broadcast(encodeFrame(parsed.data));
      return;
    }
    const name = (event as { event?: unknown } | null)?.event;
    const issue = parsed.error.issues[0];
    const message = `the host pushed an invalid ${typeof name === 'string' ? name : 'operator'} event${
      issue ? ` at ${issue.path.join('.') || '(root)'}: ${issue.message}` : ''
    }`;
    this.onError(new Error(message, { cause: parsed.error }));
    this.broadcastError(message);
  }

  private broadcastError(message: string): void {
    this.broadcast(encodeFrame({ event: 'operator.error', payload: { code: OperatorErrorCode.Internal, message } }));
  }

  private broadcast(line: string): void {
    for (const sink of [...this.sinks]) sink(line);
  }
}
