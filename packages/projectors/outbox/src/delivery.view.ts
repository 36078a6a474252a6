import type { DeliveryResolution } from '@demiurge/contracts';
import type { DeliveryEventType, DeliveryState } from '@demiurge/lifecycle';

/** A delivery's status: any state of the delivery machine except the pre-creation `none`. */
export type DeliveryStatus = Exclude<DeliveryState, 'none'>;

/** An operator's (or reconciler's) decision on an unknown delivery, as `delivery.resolved` recorded it. */
export interface DeliveryResolutionView {
  readonly decision: DeliveryResolution;
  readonly note: string | null;
  readonly at: string;
}

/** One outbox row: a delivery intent and where it is. */
export interface DeliveryView {
  readonly deliveryId: string;
  readonly sessionId: string;
  readonly messageId: string;
  /** The work item that sends it. */
  readonly workId: string;
  readonly channel: string;
  readonly conversationKey: string | null;
  readonly status: DeliveryStatus;
  /** How many sends were started (`delivery.sending` events). */
  readonly attempts: number;
  /** The last `delivery.failed` error; kept after a later success. */
  readonly lastError: { readonly code: string; readonly message: string } | null;
  /** `delivery.sent.externalId`: the channel's id for the message. */
  readonly externalId: string | null;
  /** Why no route was bound; null unless unrouted. */
  readonly unroutedReason: string | null;
  /** Why the outcome of the send is unknown; null unless unknown. */
  readonly unknownReason: string | null;
  /** The last operator decision on it (`delivery.resolved`). */
  readonly resolution: DeliveryResolutionView | null;
  readonly queuedAt: string;
  readonly updatedAt: string;
  /** The stream version of the last event applied. */
  readonly version: number;
  /** `allowedEvents(deliveryLifecycle, status)`: what the machine accepts now. */
  readonly allowed: readonly DeliveryEventType[];
}

/** An entry of `by-status`. */
export interface DeliveryStatusEntry {
  readonly deliveryId: string;
  readonly status: DeliveryStatus;
  readonly channel: string;
}

/** An entry of `by-session`. */
export interface SessionDeliveryEntry {
  readonly deliveryId: string;
  readonly status: DeliveryStatus;
}

/** Collections of the `outbox` projector. */
export const OutboxCollections = {
  /** id = deliveryId → {@link DeliveryView} */
  deliveries: 'deliveries',
  /** id = {@link deliveryStatusKey} → {@link DeliveryStatusEntry} */
  byStatus: 'by-status',
  /** id = {@link sessionDeliveryKey} → {@link SessionDeliveryEntry} */
  bySession: 'by-session',
} as const;

/**
 * The `by-status` id: status then delivery (delivery ids are time-sortable: oldest first).
 * @example
 * await reader.list<DeliveryStatusEntry>(OutboxCollections.byStatus, { prefix: deliveryStatusPrefix('unknown') });
 */
export const deliveryStatusKey = (status: DeliveryStatus, deliveryId: string): string =>
  `${deliveryStatusPrefix(status)}${deliveryId}`;
/** The prefix of one status's entries in `by-status`. */
export const deliveryStatusPrefix = (status: DeliveryStatus): string => `${status}/`;

/**
 * The `by-session` id: session then delivery.
 * @example
 * await reader.list<SessionDeliveryEntry>(OutboxCollections.bySession, { prefix: sessionDeliveriesPrefix(sessionId) });
 */
export const sessionDeliveryKey = (sessionId: string, deliveryId: string): string =>
  `${sessionDeliveriesPrefix(sessionId)}${deliveryId}`;
/** The prefix of one session's entries in `by-session`. */
export const sessionDeliveriesPrefix = (sessionId: string): string => `${sessionId}/`;
