export { type Clock, systemClock } from './clock.js';
export {
  EventId,
  SessionId,
  RunId,
  TurnId,
  MessageId,
  TaskId,
  WorkId,
  DeliveryId,
  IdPrefix,
  type Id,
  type IdGenerator,
  createIdGenerator,
  idTime,
  prefixedId,
} from './ids.js';
export {
  Actor,
  EventMeta,
  EVENT_TYPE_PATTERN,
  systemActor,
  type NewEvent,
  type RecordedEvent,
} from './envelope.js';
export {
  createEventRegistry,
  defineEvent,
  type EventData,
  type EventDefinition,
  type EventOf,
  type EventRegistry,
} from './registry.js';
export { DemiurgeError, ErrorCode, EventValidationError, UnknownEventTypeError, formatPath } from './errors.js';
export {
  ChannelBinding,
  MessageRecorded,
  MessageVisibility,
  SessionArchived,
  SessionCreated,
  SessionUpdated,
  TurnCompleted,
  TurnFailed,
  TurnStarted,
  Usage,
  sessionEvents,
} from './events/session.events.js';
export { domainEventDefinitions, domainEvents } from './catalog.js';
