import { asDomainEvent, type DeliveryResolution, type RecordedEvent } from '@demiurge/contracts';
import { NONE } from '../define-lifecycle.js';
import { type DeliveryEventType, type DeliveryState, deliveryLifecycle } from '../machines/delivery.machine.js';
import { nextState } from '../transitions.js';

/** What `delivery.queued` recorded: the intent, its session, message, work item and channel. */
export interface DeliveryIntent {
  readonly deliveryId: string;
  readonly sessionId: string;
  readonly messageId: string;
  /** The `delivery.send` work item that sends it. */
  readonly workId: string;
  readonly channel: string;
  readonly conversationKey: string | null;
  /** When it was queued (the event's `recordedAt`). */
  readonly at: string;
}

/**
 * A delivery as its stream says: the delivery machine's state plus the facts dispatch, recovery and the
 * outbox are built from. The one fold of a delivery, used by the command side (`@demiurge/delivery`) and
 * the outbox projector alike, so they cannot disagree.
 */
export interface DeliveryFacts {
  readonly status: DeliveryState;
  /** From `delivery.queued`; null while the delivery does not exist. */
  readonly queued: DeliveryIntent | null;
  /** How many sends were started (`delivery.sending` events): the next one is `attempts + 1`. */
  readonly attempts: number;
  /** The last `delivery.failed` error; kept after a later success. */
  readonly lastError: { readonly code: string; readonly message: string } | null;
  /** `delivery.sent.externalId`: the channel's id for the message. */
  readonly externalId: string | null;
  /** Why no route was bound; kept only while unrouted. */
  readonly unroutedReason: string | null;
  /** Why the outcome of the send is unknown; kept only while unknown. */
  readonly unknownReason: string | null;
  /** The last operator decision on it (`delivery.resolved`), with the time it was recorded. */
  readonly resolution: {
    readonly decision: DeliveryResolution;
    readonly note: string | null;
    readonly at: string;
  } | null;
}

/** A delivery before its first event. */
export const initialDeliveryFacts: DeliveryFacts = {
  status: NONE as DeliveryState,
  queued: null,
  attempts: 0,
  lastError: null,
  externalId: null,
  unroutedReason: null,
  unknownReason: null,
  resolution: null,
};

/** The fields one accepted event sets. */
function changes(delivery: DeliveryFacts, recorded: RecordedEvent): Partial<DeliveryFacts> {
  const event = asDomainEvent(recorded);
  switch (event.type) {
    case 'delivery.queued': {
      const d = event.data;
      const queued: DeliveryIntent = {
        deliveryId: d.deliveryId,
        sessionId: d.sessionId,
        messageId: d.messageId,
        workId: d.workId,
        channel: d.channel,
        conversationKey: d.conversationKey ?? null,
        at: event.recordedAt,
      };
      return { queued };
    }
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
      const { decision, note } = event.data;
      return { resolution: { decision, note: note ?? null, at: event.recordedAt } };
    }
    default:
      return {};
  }
}

/** The delivery after an event the machine took to `status`: the event's fields, the reasons only where they hold. */
function evolveTo(delivery: DeliveryFacts, event: RecordedEvent, status: DeliveryState): DeliveryFacts {
  const next: DeliveryFacts = { ...delivery, ...changes(delivery, event), status };
  return {
    ...next,
    unroutedReason: status === 'unrouted' ? next.unroutedReason : null,
    unknownReason: status === 'unknown' ? next.unknownReason : null,
  };
}

/**
 * The delivery fold, strict: an event the delivery machine refuses throws `IllegalTransitionError` naming
 * the delivery (the command side loads with it: `loadAggregate(store, deliveryFold, deliveryId)`).
 * @example
 * const delivery = await loadAggregate(store, deliveryFold, deliveryId); // delivery.state.attempts === 1
 */
export const deliveryFold = {
  streamType: deliveryLifecycle.streamType,
  initialState: initialDeliveryFacts,
  evolve(delivery: DeliveryFacts, event: RecordedEvent, streamId?: string): DeliveryFacts {
    return evolveTo(delivery, event, deliveryLifecycle.evolve(delivery.status, event, streamId));
  },
};

/**
 * The delivery fold, tolerant: `undefined` for an event the machine refuses (a read model skips it),
 * e.g. any event of a delivery never queued.
 * @example
 * evolveDelivery(initialDeliveryFacts, queued)?.status; // 'queued'
 */
export function evolveDelivery(delivery: DeliveryFacts, event: RecordedEvent): DeliveryFacts | undefined {
  const status = nextState(deliveryLifecycle, delivery.status, {
    type: event.type as DeliveryEventType,
    data: event.data,
  });
  return status === undefined ? undefined : evolveTo(delivery, event, status);
}
