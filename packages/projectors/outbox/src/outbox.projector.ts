import { asDomainEvent, deliveryEvents, type EventOfType, isEvent, type RecordedEvent } from '@demiurge/contracts';
import { defineProjector, type ProjectionTx } from '@demiurge/event-store';
import {
  allowedEvents,
  type DeliveryEventType,
  type DeliveryState,
  deliveryLifecycle,
  NONE,
  nextState,
} from '@demiurge/lifecycle';
import {
  type DeliveryStatus,
  type DeliveryStatusEntry,
  type DeliveryView,
  deliveryStatusKey,
  OutboxCollections,
  type SessionDeliveryEntry,
  sessionDeliveryKey,
} from './delivery.view.js';

const domainTypes = deliveryEvents.map((e) => e.type);

function created(event: EventOfType<'delivery.queued'>, status: DeliveryStatus): DeliveryView {
  const d = event.data;
  return {
    deliveryId: d.deliveryId,
    sessionId: d.sessionId,
    messageId: d.messageId,
    workId: d.workId,
    channel: d.channel,
    conversationKey: d.conversationKey ?? null,
    status,
    attempts: 0,
    lastError: null,
    externalId: null,
    unroutedReason: null,
    unknownReason: null,
    resolution: null,
    queuedAt: event.recordedAt,
    updatedAt: event.recordedAt,
    version: event.streamVersion,
    allowed: allowedEvents(deliveryLifecycle, status),
  };
}

/** The fields one accepted event sets. */
function changes(delivery: DeliveryView, recorded: RecordedEvent): Partial<DeliveryView> {
  const event = asDomainEvent(recorded);
  switch (event.type) {
    case 'delivery.sending':
      return { attempts: delivery.attempts + 1 };
    case 'delivery.sent':
      return { externalId: event.data.externalId ?? null };
    case 'delivery.failed':
      return { lastError: event.data.error };
    case 'delivery.unrouted':
      return { unroutedReason: event.data.reason };
    case 'delivery.unknown':
      return { unknownReason: event.data.reason };
    case 'delivery.resolved': {
      const d = event.data;
      return { resolution: { decision: d.decision, note: d.note ?? null, at: event.recordedAt } };
    }
    default:
      return {};
  }
}

function evolve(delivery: DeliveryView, event: RecordedEvent, status: DeliveryStatus): DeliveryView {
  const next: DeliveryView = {
    ...delivery,
    ...changes(delivery, event),
    status,
    updatedAt: event.recordedAt,
    version: event.streamVersion,
    allowed: allowedEvents(deliveryLifecycle, status),
  };
  return {
    ...next,
    unroutedReason: status === 'unrouted' ? next.unroutedReason : null,
    unknownReason: status === 'unknown' ? next.unknownReason : null,
  };
}

/** Moves the delivery's `by-status` entry and updates its `by-session` one when its status changed. */
function writeIndexes(tx: ProjectionTx, before: DeliveryView | undefined, after: DeliveryView): void {
  if (before?.status === after.status) return;
  if (before) tx.delete(OutboxCollections.byStatus, deliveryStatusKey(before.status, before.deliveryId));
  const byStatus: DeliveryStatusEntry = { deliveryId: after.deliveryId, status: after.status, channel: after.channel };
  tx.put(OutboxCollections.byStatus, deliveryStatusKey(after.status, after.deliveryId), byStatus);
  const bySession: SessionDeliveryEntry = { deliveryId: after.deliveryId, status: after.status };
  tx.put(OutboxCollections.bySession, sessionDeliveryKey(after.sessionId, after.deliveryId), bySession);
}

/**
 * The delivery outbox: one {@link DeliveryView} per delivery intent, and indexes by status and by
 * session. Statuses come from the delivery machine (`nextState`); an event it refuses, or one for a
 * delivery never queued, leaves the read model unchanged.
 */
export const outboxProjector = defineProjector({
  name: 'outbox',
  version: 1,
  handles: deliveryEvents.map((e) => e.type),
  apply(event, tx) {
    if (!isEvent(event, ...domainTypes)) return;
    const { deliveryId } = event.data;
    const delivery = tx.get<DeliveryView>(OutboxCollections.deliveries, deliveryId);
    const from: DeliveryState = delivery?.status ?? NONE;
    const to = nextState(deliveryLifecycle, from, { type: event.type as DeliveryEventType, data: event.data });
    if (to === undefined || to === NONE) return;
    const next = delivery
      ? evolve(delivery, event, to)
      : isEvent(event, 'delivery.queued')
        ? created(event, to)
        : undefined;
    if (!next) return;
    writeIndexes(tx, delivery, next);
    tx.put(OutboxCollections.deliveries, deliveryId, next);
  },
});
