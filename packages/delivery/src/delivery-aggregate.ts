import { type EventData, isEvent, type MessageRecorded } from '@demiurge/contracts';
import { type EventStore, type Loaded, loadAggregate } from '@demiurge/event-store';
import { type DeliveryFacts, deliveryFold } from '@demiurge/lifecycle';

/**
 * A delivery as its stream says: the facts of the one delivery fold (`deliveryFold` in `@demiurge/lifecycle`,
 * shared with the outbox projector): the machine's state, its `delivery.queued` intent, the sends started.
 */
export type DeliveryAggregate = Loaded<DeliveryFacts>;

/** Loads a delivery with the delivery fold: the machine checks every event. */
export function loadDelivery(store: EventStore, deliveryId: string): Promise<DeliveryAggregate> {
  return loadAggregate(store, deliveryFold, deliveryId);
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
