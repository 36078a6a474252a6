/** What an adapter is asked to deliver: one message of one session, once. */
export interface OutboundDelivery {
  readonly deliveryId: string;
  readonly sessionId: string;
  readonly messageId: string;
  /** The message body exactly as `message.recorded` has it (a retry sends the same text). */
  readonly text: string;
  /** Stable across attempts of the same delivery (its delivery id): the receiver deduplicates by it. */
  readonly idempotencyKey: string;
}

/** What a successful send returns: the channel's id for the message, when it has one. */
export interface DeliveryReceipt {
  readonly externalRef?: string;
}

/**
 * A channel adapter: the only place a delivery leaves the process. `send` resolves when the channel
 * accepted the delivery and throws a `DeliveryAdapterError` otherwise (`retryable`, `unknownOutcome`).
 * It must honour `signal`: an abort after the request left is an unknown outcome.
 *
 * @example
 * const console: DeliveryAdapter = {
 *   channel: 'console',
 *   async send(delivery) { process.stdout.write(`${delivery.text}\n`); return {}; },
 * };
 */
export interface DeliveryAdapter {
  readonly channel: string;
  send(delivery: OutboundDelivery, signal: AbortSignal): Promise<DeliveryReceipt>;
  /**
   * Whether the adapter can deliver now (an operator adapter with no sink cannot). Omitted: always.
   * A route whose adapter is not live is treated as no route (`delivery.unrouted`).
   */
  isLive?(): boolean;
}
