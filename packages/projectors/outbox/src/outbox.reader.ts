import { type ProjectionSource, type TypedCollection, typedCollection } from '@demiurge/event-store';
import {
  type DeliveryStatusEntry,
  type DeliveryView,
  OutboxCollections,
  type SessionDeliveryEntry,
  sessionDeliveriesPrefix,
} from './delivery.view.js';
import { outboxProjector } from './outbox.projector.js';

/** The `outbox` read model, typed. */
export interface OutboxReader {
  /** One delivery, or undefined. */
  get(deliveryId: string): Promise<DeliveryView | undefined>;
  /** A session's deliveries, oldest first. */
  ofSession(sessionId: string): Promise<SessionDeliveryEntry[]>;
  /** Deliveries by status then id; page with `prefix: deliveryStatusPrefix(status)`, `after`, `limit`. */
  readonly byStatus: TypedCollection<DeliveryStatusEntry>;
  readonly deliveries: TypedCollection<DeliveryView>;
}

/**
 * The typed reader of the `outbox` projection.
 * @example
 * const delivery = await outboxReader(store).get(deliveryId);
 */
export function outboxReader(store: ProjectionSource): OutboxReader {
  const reader = store.projection(outboxProjector.name);
  const deliveries = typedCollection<DeliveryView>(reader, OutboxCollections.deliveries);
  const bySession = typedCollection<SessionDeliveryEntry>(reader, OutboxCollections.bySession);
  return {
    get: (deliveryId) => deliveries.get(deliveryId),
    ofSession: (sessionId) => bySession.list({ prefix: sessionDeliveriesPrefix(sessionId) }),
    byStatus: typedCollection<DeliveryStatusEntry>(reader, OutboxCollections.byStatus),
    deliveries,
  };
}
