import type { DeliveryResolution, NewEvent, RecordedEvent } from '@demiurge/contracts';
import {
  checkEvents,
  type DeliveryEventType,
  type DeliveryFacts,
  deliveryFold,
  deliveryLifecycle,
  initialDeliveryFacts,
} from '@demiurge/lifecycle';
import { mirrorEvents, type WorkHistory } from './delivery-sync.js';

type FailureData = { readonly code: string; readonly message: string };

/**
 * What the delivery runtime asks of one delivery. The work item's own events (claim, `work.sending`,
 * `work.succeeded`...) are decided beside these; this is the delivery stream's part.
 */
export type DeliveryCommand =
  /** Intent before effect: a send starts (`delivery.sending`, the next attempt number). */
  | { readonly kind: 'start_send'; readonly deliveryId: string }
  /** Nothing can be sent (its message is missing): the attempt starts and fails at once. */
  | { readonly kind: 'fail_unsendable'; readonly deliveryId: string; readonly error: FailureData }
  /** The adapter accepted it. */
  | { readonly kind: 'record_sent'; readonly deliveryId: string; readonly externalId?: string | undefined }
  /** A route existed and the adapter raised. */
  | { readonly kind: 'record_failed'; readonly deliveryId: string; readonly error: FailureData }
  /** The send may or may not have left (a timeout, a reset, an abort mid-send). */
  | { readonly kind: 'record_unknown'; readonly deliveryId: string; readonly reason: string }
  /** No live route: a failed delivery passes through sending; an unrouted one stays as it is. */
  | { readonly kind: 'record_unrouted'; readonly deliveryId: string; readonly reason: string }
  /** Agree with the work item, the authority on what became of a send (see `mirrorEvents`). */
  | { readonly kind: 'agree_with_work'; readonly deliveryId: string; readonly work: WorkHistory | null }
  /** An operator's decision on an unknown delivery, after agreeing with its work item. */
  | {
      readonly kind: 'resolve';
      readonly deliveryId: string;
      readonly decision: DeliveryResolution;
      readonly note?: string | undefined;
      readonly work: WorkHistory;
    };

/** The events a command proposes, before the machine checks them. */
function propose(command: DeliveryCommand, delivery: DeliveryFacts): NewEvent<DeliveryEventType>[] {
  const { deliveryId } = command;
  const sending: NewEvent<DeliveryEventType> = {
    type: 'delivery.sending',
    data: { deliveryId, attempt: delivery.attempts + 1 },
  };
  switch (command.kind) {
    case 'start_send':
      return [sending];
    case 'fail_unsendable':
      return [sending, { type: 'delivery.failed', data: { deliveryId, error: command.error } }];
    case 'record_sent': {
      const { externalId } = command;
      return [{ type: 'delivery.sent', data: { deliveryId, ...(externalId ? { externalId } : {}) } }];
    }
    case 'record_failed':
      return [{ type: 'delivery.failed', data: { deliveryId, error: command.error } }];
    case 'record_unknown':
      return [{ type: 'delivery.unknown', data: { deliveryId, reason: command.reason } }];
    case 'record_unrouted': {
      if (delivery.status === 'unrouted') return [];
      const unrouted: NewEvent<DeliveryEventType> = {
        type: 'delivery.unrouted',
        data: { deliveryId, reason: command.reason },
      };
      return delivery.status === 'failed' ? [sending, unrouted] : [unrouted];
    }
    case 'agree_with_work':
      return mirrorEvents(deliveryId, delivery.status, command.work);
    case 'resolve': {
      const { decision, note } = command;
      return [
        ...mirrorEvents(deliveryId, delivery.status, command.work),
        { type: 'delivery.resolved', data: { deliveryId, decision, ...(note ? { note } : {}) } },
      ];
    }
  }
}

/**
 * Decides a delivery command from the delivery's facts (its fold, `deliveryFold`): the events to append,
 * machine-checked in order. An idempotent repeat (the same `delivery.resolved` again) appends nothing;
 * anything else the delivery machine refuses throws `IllegalTransitionError` naming the delivery.
 * @example
 * decideDelivery({ kind: 'start_send', deliveryId }, queuedFacts); // [{ type: 'delivery.sending', data: { deliveryId, attempt: 1 } }]
 */
export function decideDelivery(command: DeliveryCommand, delivery: DeliveryFacts): NewEvent<DeliveryEventType>[] {
  return checkEvents(deliveryLifecycle, delivery.status, propose(command, delivery), command.deliveryId);
}

/** The delivery as an Emmett-style decider: `decideDelivery` over the strict delivery fold. */
export const deliveryDecider = {
  initialState: initialDeliveryFacts,
  decide: decideDelivery,
  evolve: (delivery: DeliveryFacts, event: RecordedEvent): DeliveryFacts => deliveryFold.evolve(delivery, event),
};
