export { domainEventDefinitions, domainEvents } from './catalog.js';
export { renderEventCatalog } from './event-catalog.js';
export { type Clock, systemClock } from './clock.js';
export {
  Actor,
  EVENT_TYPE_PATTERN,
  EventMeta,
  type NewEvent,
  type RecordedEvent,
  systemActor,
} from './envelope.js';
export { DemiurgeError, ErrorCode, EventValidationError, formatPath, UnknownEventTypeError } from './errors.js';
export {
  ChannelBinding,
  MessageRecorded,
  MessageVisibility,
  SessionArchived,
  SessionCreated,
  SessionUpdated,
  sessionEvents,
  TurnCompleted,
  TurnFailed,
  TurnStarted,
  Usage,
} from './events/session.events.js';
export {
  createIdGenerator,
  DeliveryId,
  EventId,
  type Id,
  type IdGenerator,
  IdPrefix,
  idTime,
  MessageId,
  prefixedId,
  RunId,
  SessionId,
  TaskId,
  TurnId,
  WorkId,
} from './ids.js';
export {
  createEventRegistry,
  defineEvent,
  type EventData,
  type EventDefinition,
  type EventOf,
  type EventRegistry,
} from './registry.js';
