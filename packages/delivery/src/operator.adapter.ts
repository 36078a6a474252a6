import type { DeliveryAdapter, DeliveryReceipt, OutboundDelivery } from './delivery-adapter.js';
import { DeliveryAdapterError, DeliveryFailureCode } from './errors.js';

/**
 * Where the operator adapter hands deliveries: the operator gateway pushes them to its connected clients
 * (`operator.deliver`). Return normally when handed over (optionally with an external ref); throw a
 * `DeliveryAdapterError` to say how it failed (anything else is recorded as a final `adapter_error`).
 */
export type OperatorSink = (
  delivery: OutboundDelivery,
  signal: AbortSignal,
) => undefined | DeliveryReceipt | Promise<undefined | DeliveryReceipt>;

/** The operator channel's adapter; its sink comes and goes with the operator gateway. */
export interface OperatorAdapter extends DeliveryAdapter {
  /** Registers the sink (replacing any earlier one); returns a function that removes this sink. */
  attach(sink: OperatorSink): () => void;
  /** Whether a sink is attached: without one the adapter is not live, and deliveries are `unrouted`. */
  isLive(): boolean;
}

/**
 * An adapter that hands each delivery to the registered operator sink. With no sink attached it is not
 * live: the router treats it as no route (`delivery.unrouted`, retried later), and a send that finds the
 * sink gone throws a `no_route` `DeliveryAdapterError`.
 *
 * @example
 * const operator = createOperatorAdapter();
 * const detach = operator.attach((delivery) => gateway.push({ type: 'operator.deliver', ...delivery }));
 * router.bind(sessionId, operator);
 */
export function createOperatorAdapter(options: { channel?: string } = {}): OperatorAdapter {
  const channel = options.channel ?? 'operator';
  let current: OperatorSink | undefined;
  return {
    channel,
    attach(sink) {
      current = sink;
      return () => {
        if (current === sink) current = undefined;
      };
    },
    isLive: () => current !== undefined,
    async send(delivery, signal) {
      const sink = current;
      if (!sink) {
        throw new DeliveryAdapterError({
          code: DeliveryFailureCode.NoRoute,
          channel,
          detail: 'no operator sink is attached',
          retryable: true,
          unknownOutcome: false,
        });
      }
      try {
        return (await sink(delivery, signal)) ?? {};
      } catch (err) {
        if (err instanceof DeliveryAdapterError) throw err;
        throw new DeliveryAdapterError({
          code: DeliveryFailureCode.AdapterError,
          channel,
          detail: `the operator sink raised: ${err instanceof Error ? err.message : String(err)}`,
          retryable: false,
          unknownOutcome: false,
          cause: err,
        });
      }
    },
  };
}
