import type { z } from 'zod';
import type { domainEventDefinitions } from './catalog.js';
import type { NewEvent, RecordedEvent } from './envelope.js';

type Definition = (typeof domainEventDefinitions)[number];

/** Every domain event type name, derived from the definitions in the catalog: `'run.started' | ...`. */
export type DomainEventType = Definition['type'];

/** The data of each domain event type as stores return it (the zod schema's output), by type. */
export type DomainEventDataMap = { [D in Definition as D['type']]: z.output<D['data']> };

/** The data of each domain event type as an append takes it (the zod schema's input), by type. */
export type DomainEventInputMap = { [D in Definition as D['type']]: z.input<D['data']> };

/** The data of one domain event type, e.g. `DomainEventData<'run.started'>`. */
export type DomainEventData<T extends DomainEventType> = DomainEventDataMap[T];

/**
 * One recorded domain event of type `T`, with its data typed by the schema. Distributes over a union of
 * types: `EventOfType<'a' | 'b'>` is a discriminated union that `switch (event.type)` narrows.
 */
export type EventOfType<T extends DomainEventType> = T extends DomainEventType
  ? RecordedEvent<T, DomainEventDataMap[T]>
  : never;

/**
 * A recorded domain event: the discriminated union over `type` of every event in the catalog.
 * `switch (event.type)` narrows `event.data` to that type's schema, so folds, deciders and projectors
 * read fields without casts.
 * @example
 * const e = asDomainEvent(recorded);
 * if (e.type === 'run.started') console.log(e.data.owner);
 */
export type DomainEvent = EventOfType<DomainEventType>;

/** Alias of {@link DomainEvent}: the recorded (envelope + typed data) form. */
export type RecordedDomainEvent = DomainEvent;

/** A new domain event of type `T` to append, its data typed by the schema's input. */
export type NewEventOfType<T extends DomainEventType> = T extends DomainEventType
  ? NewEvent<T, DomainEventInputMap[T]>
  : never;

/** A new domain event to append: the discriminated union over `type`. */
export type NewDomainEvent = NewEventOfType<DomainEventType>;

/**
 * Narrows a recorded event to the domain union. Stores validate data against the registry's schemas on
 * append and on read (upcasting older versions), so a recorded event of a catalog type has the schema's
 * shape; this is the one place that relies on it. Events of types outside the catalog (test registries)
 * fall to the `default` branch of a switch.
 */
export function asDomainEvent(event: RecordedEvent): DomainEvent {
  return event as DomainEvent;
}

/**
 * Type guard: whether a recorded event is of one of the given domain types; narrows its data.
 * @example
 * if (isEvent(event, 'run.owner_heartbeat')) event.data.token; // typed
 * if (isEvent(event, 'run.completed', 'run.failed')) event.data.runId;
 */
export function isEvent<T extends DomainEventType>(
  event: RecordedEvent,
  ...types: readonly T[]
): event is EventOfType<T> {
  return (types as readonly string[]).includes(event.type);
}

/**
 * The first event of one of the given types in a stream, narrowed; undefined when there is none.
 * @example
 * const submitted = findEvent(task.events, 'task.submitted'); // submitted?.data.sessionId is typed
 */
export function findEvent<T extends DomainEventType>(
  events: readonly RecordedEvent[],
  ...types: readonly T[]
): EventOfType<T> | undefined {
  for (const event of events) if (isEvent(event, ...types)) return event;
  return undefined;
}

/**
 * Builds a typed new event; the compiler checks the data against the type's schema input.
 * @example
 * const e = newEvent('run.queued', { runId, sessionId });
 */
export function newEvent<T extends DomainEventType>(
  type: T,
  data: DomainEventInputMap[T],
  options: Omit<NewEvent, 'type' | 'data'> = {},
): NewEventOfType<T> {
  return { ...options, type, data } as NewEventOfType<T>;
}

/**
 * One field of an event's data, whatever the event's type: for readers generic over every event type (the
 * OpenTelemetry span exporter reads `turnId`, `tool`, `reason` wherever they are); undefined when absent.
 * Readers of a known type narrow with {@link isEvent} instead.
 */
export function eventField(event: { readonly data: unknown }, name: string): unknown {
  const { data } = event;
  return data !== null && typeof data === 'object' ? (data as Record<string, unknown>)[name] : undefined;
}
