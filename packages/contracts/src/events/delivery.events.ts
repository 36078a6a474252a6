import { z } from 'zod';
import { DeliveryId, MessageId, SessionId, WorkId } from '../ids.js';
import { defineEvent } from '../registry.js';

const failure = z.object({ code: z.string().min(1), message: z.string().min(1) });

/** An operator's (or reconciler's) decision on a delivery whose outcome is unknown. */
export const DeliveryResolution = z.enum(['sent', 'failed', 'retry']);
export type DeliveryResolution = z.infer<typeof DeliveryResolution>;

export const DeliveryQueued = defineEvent({
  type: 'delivery.queued',
  schemaVersion: 1,
  description: 'A delivery intent was recorded in the outbox, with the work item that will send it.',
  data: () =>
    z.object({
      deliveryId: DeliveryId,
      sessionId: SessionId,
      messageId: MessageId,
      workId: WorkId,
      channel: z.string().min(1),
      conversationKey: z.string().min(1).optional(),
    }),
});

export const DeliverySending = defineEvent({
  type: 'delivery.sending',
  schemaVersion: 1,
  description: 'A dispatcher is about to hand the delivery to its channel adapter (intent before effect).',
  data: () => z.object({ deliveryId: DeliveryId, attempt: z.number().int().positive() }),
});

export const DeliverySent = defineEvent({
  type: 'delivery.sent',
  schemaVersion: 1,
  description: 'The channel adapter accepted the delivery.',
  data: () => z.object({ deliveryId: DeliveryId, externalId: z.string().min(1).optional() }),
});

export const DeliveryFailed = defineEvent({
  type: 'delivery.failed',
  schemaVersion: 1,
  description: 'A route existed but the channel adapter raised; the work item decides on a retry.',
  data: () => z.object({ deliveryId: DeliveryId, error: failure }),
});

export const DeliveryUnrouted = defineEvent({
  type: 'delivery.unrouted',
  schemaVersion: 1,
  description: "No live route is bound for the delivery's session; it waits for one.",
  data: () => z.object({ deliveryId: DeliveryId, reason: z.string().min(1) }),
});

export const DeliveryUnknown = defineEvent({
  type: 'delivery.unknown',
  schemaVersion: 1,
  description:
    'A send was interrupted (crash or lease expiry); whether it arrived is unknown and it is never re-sent automatically.',
  data: () => z.object({ deliveryId: DeliveryId, reason: z.string().min(1) }),
});

export const DeliveryResolved = defineEvent({
  type: 'delivery.resolved',
  schemaVersion: 1,
  description: 'An operator decided the outcome of an unknown delivery: sent, failed, or retry (queued again).',
  data: () => z.object({ deliveryId: DeliveryId, decision: DeliveryResolution, note: z.string().min(1).optional() }),
});

export const deliveryEvents = [
  DeliveryQueued,
  DeliverySending,
  DeliverySent,
  DeliveryFailed,
  DeliveryUnrouted,
  DeliveryUnknown,
  DeliveryResolved,
] as const;
