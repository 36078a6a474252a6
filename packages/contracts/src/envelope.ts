import { z } from 'zod';

/**
 * Who caused an event (a principal): `operator` an operator client (id: its `initialize` client name) or the
 * admin CLI (id `cli`); `user` a person at the CLI (`run`, `chat`; id `cli:<login>`); `agent` a model acting
 * in a session (id: that session); `schedule` a scheduled fire (id: the schedule); `system` the host itself.
 */
export const Actor = z.object({
  kind: z.enum(['user', 'agent', 'system', 'operator', 'schedule']),
  id: z.string().min(1),
});
export type Actor = z.infer<typeof Actor>;

/** The system principal, used where no person or agent caused the change. */
export const systemActor: Actor = { kind: 'system', id: 'demiurge' };

/**
 * Event metadata: who did it, and how it links to other events and to the session/run/turn it
 * belongs to. Unknown keys are kept, so newer writers do not lose data through older readers.
 */
export const EventMeta = z.looseObject({
  actor: Actor,
  correlationId: z.string().min(1).optional(),
  causationId: z.string().min(1).optional(),
  sessionId: z.string().min(1).optional(),
  runId: z.string().min(1).optional(),
  turnId: z.string().min(1).optional(),
});
export type EventMeta = z.infer<typeof EventMeta>;

/** Dotted, lower-case, past-tense type names grouped by aggregate: `task.submitted`. */
export const EVENT_TYPE_PATTERN = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;

/**
 * An event as the log recorded it. `position` is global and strictly increasing;
 * `streamVersion` is 1-based and contiguous within its stream.
 */
export interface RecordedEvent<T extends string = string, D = unknown> {
  readonly position: number;
  readonly eventId: string;
  readonly streamType: string;
  readonly streamId: string;
  readonly streamVersion: number;
  readonly type: T;
  readonly schemaVersion: number;
  readonly data: D;
  readonly meta: EventMeta;
  /** ISO-8601 time from the store's clock. */
  readonly recordedAt: string;
}

/** An event to append: its type and data, and optionally its own id and meta. */
export interface NewEvent<T extends string = string, D = unknown> {
  readonly type: T;
  readonly data: D;
  readonly eventId?: string;
  readonly meta?: Partial<EventMeta>;
}
