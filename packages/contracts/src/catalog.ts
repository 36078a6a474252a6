import { approvalEvents } from './events/approval.events.js';
import { coreEvents } from './events/core.events.js';
import { deliveryEvents } from './events/delivery.events.js';
import { mcpServerEvents } from './events/mcp-server.events.js';
import { runEvents } from './events/run.events.js';
import { scheduleInstanceEvents } from './events/schedule.events.js';
import { sessionEvents } from './events/session.events.js';
import { sessionModeEvents } from './events/session-mode.events.js';
import { slotEvents } from './events/slot.events.js';
import { taskEvents } from './events/task.events.js';
import { toolCallEvents } from './events/tool-call.events.js';
import { turnEvents } from './events/turn.events.js';
import { workEvents } from './events/work.events.js';
import { createEventRegistry, type EventRegistry } from './registry.js';

/**
 * Every domain event definition, grouped by aggregate. Later packages' events are added here,
 * so one registry validates the whole log and the docs' event catalog is generated from it.
 */
export const domainEventDefinitions = [
  ...sessionEvents,
  ...sessionModeEvents,
  ...turnEvents,
  ...taskEvents,
  ...runEvents,
  ...workEvents,
  ...deliveryEvents,
  ...toolCallEvents,
  ...scheduleInstanceEvents,
  ...approvalEvents,
  ...slotEvents,
  ...mcpServerEvents,
  ...coreEvents,
] as const;

/** The registry of every domain event, the default for stores. */
export const domainEvents: EventRegistry = createEventRegistry(domainEventDefinitions);
