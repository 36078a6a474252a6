import { sessionEvents } from './events/session.events.js';
import { createEventRegistry, type EventRegistry } from './registry.js';

/**
 * Every domain event definition, grouped by aggregate. Later packages' events are added here,
 * so one registry validates the whole log and the docs' event catalog is generated from it.
 */
export const domainEventDefinitions = [...sessionEvents] as const;

/** The registry of every domain event, the default for stores. */
export const domainEvents: EventRegistry = createEventRegistry(domainEventDefinitions);
