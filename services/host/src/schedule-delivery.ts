import type { EventStore } from '@demiurge/event-store';
import { scheduleInstancesReader } from '@demiurge/scheduler';
import type { SessionRuntime } from '@demiurge/sessions';
import type { SessionDeliveryRoute } from '@demiurge/slots';

/** The channel of the sessions the host opens for scheduled fires (their conversation key is the fire key). */
export const SCHEDULE_CHANNEL = 'schedule';

/**
 * Where the sends of a session go when it is a scheduled fire's: the `delivery` its schedule instance was
 * created under (`{ channel, conversation_key }`), or `null` (no `delivery`: the answer is recorded in the
 * fire's own session and sent nowhere). Other sessions: `undefined` (their binding decides).
 */
export async function scheduledRouteOf(
  store: EventStore,
  sessions: SessionRuntime,
  sessionId: string,
): Promise<SessionDeliveryRoute | null | undefined> {
  const session = await sessions.get(sessionId);
  if (session.binding?.channel !== SCHEDULE_CHANNEL) return undefined;
  // The fire key: `<core>/<schedule>/<dueAt>` (schedule ids and ISO times hold no `/`).
  const key = session.binding.conversationKey;
  const dueCut = key.lastIndexOf('/');
  const scheduleCut = key.lastIndexOf('/', dueCut - 1);
  if (dueCut < 0 || scheduleCut < 0) return null;
  const instances = await scheduleInstancesReader(store).ofFire(
    key.slice(0, scheduleCut),
    key.slice(scheduleCut + 1, dueCut),
    key.slice(dueCut + 1),
  );
  for (const instance of instances) {
    if (instance.sessionId !== sessionId) continue;
    const delivery = instance.definition?.delivery;
    if (!delivery) return null;
    return {
      channel: delivery.channel,
      ...(delivery.conversation_key ? { conversationKey: delivery.conversation_key } : {}),
    };
  }
  return null;
}
