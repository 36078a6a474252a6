import { type DeliveryQueued, type EventData, isEvent, type MessageRecorded } from '@demiurge/contracts';
import { type EventStore, type Loaded, loadAggregate } from '@demiurge/event-store';
import { type DeliveryState, deliveryLifecycle } from '@demiurge/lifecycle';

/** A delivery as its stream says: the machine's state plus the facts of its `delivery.queued`. */
export interface DeliveryAggregate extends Loaded<DeliveryState> {
  /** `delivery.queued` data; null while the delivery does not exist. */
  readonly queued: EventData<typeof DeliveryQueued> | null;
  /** How many `delivery.sending` events it has. */
  readonly sends: number;
}

/** Loads a delivery by folding its stream through the delivery machine. */
export async function loadDelivery(store: EventStore, deliveryId: string): Promise<DeliveryAggregate> {
  const loaded = await loadAggregate(store, deliveryLifecycle, deliveryId);
  const first = loaded.events[0];
  return {
    ...loaded,
    queued: first && isEvent(first, 'delivery.queued') ? first.data : null,
    sends: loaded.events.filter((e) => e.type === 'delivery.sending').length,
  };
}

/**
 * The `message.recorded` a delivery carries, read from its session stream (transient messages included:
 * they are not in the transcript projection, but may still be delivered). Undefined when it is not there.
 */
export async function findMessage(
  store: EventStore,
  sessionId: string,
  messageId: string,
): Promise<EventData<typeof MessageRecorded> | undefined> {
  const events = await store.readStream(sessionId);
  for (const event of events) {
    if (isEvent(event, 'message.recorded') && event.data.messageId === messageId) return event.data;
  }
  return undefined;
}
