import { DemiurgeError, ErrorCode } from '@demiurge/contracts';

/**
 * Why a delivery attempt did not succeed, as recorded in `delivery.failed`/`work.failed` (`error.code`).
 * `http_<status>` codes (`http_500`, `http_404`...) are built with {@link httpFailureCode}.
 * @example
 * if ((await delivery.get(id)).lastError?.code === DeliveryFailureCode.ConnectionRefused) console.log('receiver down');
 */
export const DeliveryFailureCode = {
  /** The route's adapter is not live (an operator adapter with no sink): recorded as `delivery.unrouted`. */
  NoRoute: 'no_route',
  /** The connection was refused or the host was not found: nothing was sent. */
  ConnectionRefused: 'connection_refused',
  /** The adapter gave up waiting after the request was sent. */
  Timeout: 'timeout',
  /** The connection broke after the request was sent. */
  ConnectionReset: 'connection_reset',
  /** The dispatcher aborted the send (shutdown or the end of the work lease) after it started. */
  Aborted: 'aborted',
  /** The adapter raised something that is not a {@link DeliveryAdapterError} (a bug in it). */
  AdapterError: 'adapter_error',
  /** A route was asked to carry another session's message. */
  RouteSessionMismatch: 'route_session_mismatch',
  /** The delivery's message is not in its session stream. */
  MessageNotFound: 'message_not_found',
  /** The work item names a delivery that was never queued. */
  DeliveryNotFound: 'delivery_not_found',
  /** The work item is claimable but its delivery is in a state no send may start from. */
  DeliveryState: 'delivery_state',
} as const;
export type DeliveryFailureCode = (typeof DeliveryFailureCode)[keyof typeof DeliveryFailureCode];

/**
 * `http_<status>`, the failure code of an HTTP error answer.
 * @example
 * httpFailureCode(503); // 'http_503'
 */
export const httpFailureCode = (status: number): string => `http_${status}`;

export interface DeliveryAdapterErrorInit {
  /** A {@link DeliveryFailureCode} or `http_<status>`. */
  readonly code: string;
  readonly channel: string;
  readonly detail: string;
  /** Sending the same delivery again later could succeed, and nothing arrived this time. */
  readonly retryable: boolean;
  /**
   * The request may have reached the other side (a timeout or a reset after it was sent): never re-sent.
   * It wins over `retryable` (an unknown outcome is never retryable).
   */
  readonly unknownOutcome: boolean;
  /** The other side asked to wait at least this long (HTTP `Retry-After`). */
  readonly retryAfterMs?: number | undefined;
  /** The HTTP status, for `http_<status>`. */
  readonly status?: number | undefined;
  readonly cause?: unknown;
}

/**
 * What an adapter throws when a send did not succeed. The runtime records it: `unknownOutcome` →
 * `delivery.unknown` (never re-sent), `code: 'no_route'` → `delivery.unrouted`, otherwise
 * `delivery.failed`, with a retry time when `retryable`.
 *
 * It is data for the delivery log, not an error for a person: it never leaves {@link DeliveryRuntime}, so
 * it has its own code map instead of a `DemiurgeError` code.
 *
 * @example
 * throw new DeliveryAdapterError({ code: 'http_503', channel: 'webhook', detail: 'HTTP 503', retryable: true, unknownOutcome: false });
 */
export class DeliveryAdapterError extends Error {
  override readonly name = 'DeliveryAdapterError';
  readonly code: string;
  readonly channel: string;
  readonly retryable: boolean;
  readonly unknownOutcome: boolean;
  readonly retryAfterMs: number | undefined;
  readonly status: number | undefined;

  constructor(init: DeliveryAdapterErrorInit) {
    super(`${init.channel} delivery: ${init.detail}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.channel = init.channel;
    this.retryable = init.unknownOutcome ? false : init.retryable;
    this.unknownOutcome = init.unknownOutcome;
    this.retryAfterMs = init.retryAfterMs;
    this.status = init.status;
  }
}

/**
 * A route bound to one session was asked to carry a message of another session; nothing was sent.
 *
 * @example
 * try { await route.send(delivery, signal); }
 * catch (e) { if (e instanceof RouteSessionMismatchError) console.error(e.routeSessionId, e.deliverySessionId); }
 */
export class RouteSessionMismatchError extends DemiurgeError {
  override readonly name = 'RouteSessionMismatchError';
  readonly code = ErrorCode.PolicyDenied;
  constructor(
    readonly channel: string,
    readonly routeSessionId: string,
    readonly deliverySessionId: string,
    readonly deliveryId: string,
  ) {
    super(
      `the ${channel} route of session ${routeSessionId} refuses delivery ${deliveryId} of session ` +
        `${deliverySessionId}: a route carries only its own session's messages`,
    );
  }
}
