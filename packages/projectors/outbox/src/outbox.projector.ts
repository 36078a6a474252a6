import { deliveryEvents, isEvent, type RecordedEvent } from '@demiurge/contracts';
import { defineProjector, type ProjectionTx } from '@demiurge/event-store';
import {
  allowedEvents,
  type DeliveryFacts,
  deliveryLifecycle,
  evolveDelivery,
  initialDeliveryFacts,
} from '@demiurge/lifecycle';
import {
  type DeliveryStatusEntry,
  type DeliveryView,
  deliveryStatusKey,
  OutboxCollections,
  type SessionDeliveryEntry,
  sessionDeliveryKey,
} from './delivery.view.js';

const domainTypes = deliveryEvents.map((e) => e.type);

/** The fold's facts of a stored row (the row keeps every fact the fold reads back). */
function factsOf(view: DeliveryView): DeliveryFacts {
  return {
    status: view.status,
    queued: {
      deliveryId: view.deliveryId,
      sessionId: view.sessionId,
      messageId: view.messageId,
      workId: view.workId,
      channel: view.channel,
      conversationKey: view.conversationKey,
      at: view.queuedAt,
    },
    attempts: view.attempts,
    lastError: view.lastError,
    externalId: view.externalId,
    unroutedReason: view.unroutedReason,
    unknownReason: view.unknownReason,
    resolution: view.resolution,
  };
}

/** The row of a delivery after the fold (`evolveDelivery`, the same fold the command side loads deliveries with). */
function viewOf(facts: DeliveryFacts, event: RecordedEvent): DeliveryView | undefined {
  const { status, queued } = facts;
  if (status === 'none' || queued === null) return undefined;
  return {
    deliveryId: queued.deliveryId,
    sessionId: queued.sessionId,
    messageId: queued.messageId,
    workId: queued.workId,
    channel: queued.channel,
    conversationKey: queued.conversationKey,
    status,
    attempts: facts.attempts,
    lastError: facts.lastError,
    externalId: facts.externalId,
    unroutedReason: facts.unroutedReason,
    unknownReason: facts.unknownReason,
    resolution: facts.resolution,
    queuedAt: queued.at,
    updatedAt: event.recordedAt,
    version: event.streamVersion,
    allowed: allowedEvents(deliveryLifecycle, status),
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
 * session. Rows come from the delivery fold (`evolveDelivery` in `@demiurge/lifecycle`: statuses from the
 * delivery machine); an event it refuses, or one for a delivery never queued, leaves the read model unchanged.
 */
export const outboxProjector = defineProjector({
  name: 'outbox',
  version: 1,
  handles: deliveryEvents.map((e) => e.type),
  apply(event, tx) {
    if (!isEvent(event, ...domainTypes)) return;
    const { deliveryId } = event.data;
    const delivery = tx.get<DeliveryView>(OutboxCollections.deliveries, deliveryId);
    const facts = evolveDelivery(delivery ? factsOf(delivery) : initialDeliveryFacts, event);
    const next = facts && viewOf(facts, event);
    if (!next) return;
    writeIndexes(tx, delivery, next);
    tx.put(OutboxCollections.deliveries, deliveryId, next);
  },
});
