export {
  type DeliveryResolutionView,
  type DeliveryStatus,
  type DeliveryStatusEntry,
  type DeliveryView,
  deliveryStatusKey,
  deliveryStatusPrefix,
  OutboxCollections,
  type SessionDeliveryEntry,
  sessionDeliveriesPrefix,
  sessionDeliveryKey,
} from './delivery.view.js';
export { outboxProjector } from './outbox.projector.js';
export { type OutboxReader, outboxReader } from './outbox.reader.js';
