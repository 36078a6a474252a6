import { deliveryEvents } from '@demiurge/contracts';
import { defineLifecycle, type LifecycleEvent, type StateOf } from '../define-lifecycle.js';
import { decisionIs } from '../guards.js';
import { lazySetup } from '../lazy-machine.js';

/** The event types the Delivery machine handles, e.g. for a typed `NewEvent<DeliveryEventType>`. */
export type DeliveryEventType = (typeof deliveryEvents)[number]['type'];

/**
 * The outbox lifecycle (seed 003 DeliveryRuntime): queued → sending → sent / failed / unknown /
 * unrouted. A failed or unrouted delivery may be attempted again (its work item decides when);
 * an unknown one only after an operator's `delivery.resolved`.
 */
export const deliveryMachine = lazySetup({
  types: { events: {} as LifecycleEvent<DeliveryEventType> },
  guards: { decisionIs },
}).createMachine({
  id: 'delivery',
  initial: 'none',
  states: {
    none: { description: 'No delivery yet.', on: { 'delivery.queued': 'queued' } },
    queued: {
      description: 'A recorded delivery intent waiting for dispatch.',
      on: { 'delivery.sending': 'sending', 'delivery.unrouted': 'unrouted' },
    },
    sending: {
      description: 'Handed to a channel adapter; the outcome is not yet recorded.',
      on: {
        'delivery.sent': 'sent',
        'delivery.failed': 'failed',
        'delivery.unknown': 'unknown',
        'delivery.unrouted': 'unrouted',
      },
    },
    sent: { description: 'Accepted by the channel; final.' },
    failed: {
      description: 'A route existed and the adapter raised; its work item may retry it.',
      on: { 'delivery.sending': 'sending' },
    },
    unknown: {
      description: 'Interrupted mid-send; never re-sent automatically.',
      on: {
        'delivery.resolved': [
          {
            target: 'sent',
            guard: { type: 'decisionIs', params: { decision: 'sent' } },
            description: 'decision is sent',
          },
          {
            target: 'failed',
            guard: { type: 'decisionIs', params: { decision: 'failed' } },
            description: 'decision is failed',
          },
          {
            target: 'queued',
            guard: { type: 'decisionIs', params: { decision: 'retry' } },
            description: 'decision is retry',
          },
        ],
      },
    },
    unrouted: {
      description: "No live route is bound for the delivery's session; dispatched again once one is.",
      on: { 'delivery.sending': 'sending' },
    },
  },
});

/** The states of a Delivery machine, `none` included. */
export type DeliveryState = StateOf<typeof deliveryMachine>;

/** The delivery (outbox) lifecycle: {@link deliveryMachine} with its vocabulary, invariants and idempotent repeats. */
export const deliveryLifecycle = defineLifecycle({
  aggregate: 'delivery',
  streamType: 'delivery',
  title: 'Delivery (outbox)',
  summary:
    'An outbound message intent, recorded before any send and dispatched through the session-scoped interaction router.',
  invariants: [
    'Intent before effect: a delivery is queued, then marked sending before the adapter is called, then sent, failed or unknown.',
    'unrouted means no live route was bound; failed means a route existed and the adapter raised.',
    'An unknown delivery is never re-sent automatically: only delivery.resolved (sent, failed, or retry back to queued) leaves it.',
    'Resolving is idempotent: repeating the same decision appends nothing.',
  ],
  machine: deliveryMachine,
  vocabulary: deliveryEvents,
  idempotent: [{ event: 'delivery.resolved' }],
});
