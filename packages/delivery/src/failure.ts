import type { DeliveryReceipt, OutboundDelivery } from './delivery-adapter.js';
import { DeliveryAdapterError, DeliveryFailureCode, RouteSessionMismatchError } from './errors.js';
import type { SessionRoute } from './session-interaction-router.js';

/** What a raised adapter comes to in the delivery log. */
export type FailureClass =
  | { readonly kind: 'unknown'; readonly error: FailureData }
  | { readonly kind: 'unrouted'; readonly error: FailureData }
  | {
      readonly kind: 'failed';
      readonly error: FailureData;
      readonly retryable: boolean;
      readonly retryAfterMs: number | undefined;
    };

interface FailureData {
  readonly code: string;
  readonly message: string;
}

/**
 * Sorts what a send raised: a {@link DeliveryAdapterError} says itself (unknown outcome, no route, or a
 * failure retryable or not); a {@link RouteSessionMismatchError} is a final failure (nothing was sent);
 * anything else is a bug in the adapter, recorded as a final `adapter_error` failure (never re-sent).
 */
export function classifyFailure(err: unknown, channel: string): FailureClass {
  if (err instanceof DeliveryAdapterError) {
    const error = { code: err.code, message: err.message };
    if (err.unknownOutcome) return { kind: 'unknown', error };
    if (err.code === DeliveryFailureCode.NoRoute) return { kind: 'unrouted', error };
    return { kind: 'failed', error, retryable: err.retryable, retryAfterMs: err.retryAfterMs };
  }
  if (err instanceof RouteSessionMismatchError) {
    return {
      kind: 'failed',
      error: { code: DeliveryFailureCode.RouteSessionMismatch, message: err.message },
      retryable: false,
      retryAfterMs: undefined,
    };
  }
  const detail = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return {
    kind: 'failed',
    error: { code: DeliveryFailureCode.AdapterError, message: `the ${channel} adapter raised ${detail}` },
    retryable: false,
    retryAfterMs: undefined,
  };
}

/**
 * Sends through the route, giving up when `signal` aborts even if the adapter ignores it: the send may
 * have left, so that is an unknown outcome.
 */
export function sendUntil(
  route: SessionRoute,
  delivery: OutboundDelivery,
  signal: AbortSignal,
): Promise<DeliveryReceipt> {
  return new Promise<DeliveryReceipt>((resolve, reject) => {
    const onAbort = () =>
      reject(
        new DeliveryAdapterError({
          code: DeliveryFailureCode.Aborted,
          channel: route.channel,
          detail: 'the send was aborted (shutdown or the end of its lease) before the adapter answered',
          retryable: false,
          unknownOutcome: true,
          cause: signal.reason,
        }),
      );
    if (signal.aborted) {
      // The adapter was never called: nothing left, so this attempt may simply be retried.
      return reject(
        new DeliveryAdapterError({
          code: DeliveryFailureCode.Aborted,
          channel: route.channel,
          detail: 'the send was aborted before the adapter was called; nothing was sent',
          retryable: true,
          unknownOutcome: false,
          cause: signal.reason,
        }),
      );
    }
    signal.addEventListener('abort', onAbort, { once: true });
    route.send(delivery, signal).then(
      (receipt) => {
        signal.removeEventListener('abort', onAbort);
        resolve(receipt);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
