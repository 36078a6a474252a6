import type { IdGenerator } from '@demiurge/contracts';
import { type DeliveryEventType, type DeliveryState, deliveryLifecycle } from '../machines/delivery.machine.js';
import type { WalkSpec } from './machine-walk.js';

/**
 * Valid data for every delivery event, for {@link MachineWalk}: shaped like the zod schemas of
 * contracts' delivery.events.ts, every delivery.resolved decision among the variants.
 */

export const CHANNELS = ['cli', 'telegram', 'web'] as const;

/** What the walk knows of one delivery. */
export interface DeliveryModel {
  readonly deliveryId: string;
  readonly sessionId: string;
  readonly messageId: string;
  readonly workId: string;
  state: DeliveryState;
  channel: string;
  sends: number;
}

const DECISIONS = ['sent', 'failed', 'retry'] as const;

function deliveryData(m: DeliveryModel, type: DeliveryEventType, v: number): Record<string, unknown> {
  const { deliveryId } = m;
  const odd = v % 2 === 1;
  switch (type) {
    case 'delivery.queued':
      return {
        deliveryId,
        sessionId: m.sessionId,
        messageId: m.messageId,
        workId: m.workId,
        channel: CHANNELS[v % CHANNELS.length],
        ...(odd ? { conversationKey: `chat-${v % 4}` } : {}),
      };
    case 'delivery.sending':
      return { deliveryId, attempt: m.sends + 1 };
    case 'delivery.sent':
      return { deliveryId, ...(odd ? { externalId: `ext-${v % 100}` } : {}) };
    case 'delivery.failed':
      return { deliveryId, error: { code: `e${v % 3}`, message: 'adapter raised' } };
    case 'delivery.unrouted':
      return { deliveryId, reason: 'no live route' };
    case 'delivery.unknown':
      return { deliveryId, reason: 'crashed mid-send' };
    case 'delivery.resolved':
      return {
        deliveryId,
        decision: DECISIONS[v % DECISIONS.length],
        ...((v >> 1) % 2 === 0 ? { note: 'checked the channel' } : {}),
      };
  }
}

/** A walk spec over deliveries of the given sessions (the n-th delivery goes to session n mod count). */
export function deliveryWalk(
  ids: IdGenerator,
  sessions: readonly string[],
): WalkSpec<DeliveryState, DeliveryEventType, DeliveryModel> {
  let made = 0;
  return {
    lifecycle: deliveryLifecycle,
    streamType: 'delivery',
    create: () => ({
      deliveryId: ids.next('dlv'),
      sessionId: sessions[made++ % sessions.length]!,
      messageId: ids.next('msg'),
      workId: ids.next('wrk'),
      state: 'none',
      channel: '',
      sends: 0,
    }),
    streamId: (m) => m.deliveryId,
    data: deliveryData,
    taken(m, type, data) {
      if (type === 'delivery.queued') m.channel = String(data.channel);
      if (type === 'delivery.sending') m.sends++;
    },
  };
}
