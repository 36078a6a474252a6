import { workEvents } from '@demiurge/contracts';
import { defineLifecycle, type LifecycleEvent, type StateOf } from '../define-lifecycle.js';
import { decisionIs, hasRetryAt } from '../guards.js';
import { lazySetup } from '../lazy-machine.js';

/** The event types the Work machine handles, e.g. for a typed `NewEvent<WorkEventType>`. */
export type WorkEventType = (typeof workEvents)[number]['type'];

const failed = [
  { target: 'retry_scheduled', guard: 'hasRetryAt', description: 'retryAt is set' },
  { target: 'failed', description: 'no retryAt' },
] as const;

/**
 * The durable work item lifecycle (seed 003 DurableWorkRuntime): leased claims with a fencing
 * token, intent (`sending`) before an external effect, and `unknown` for an interrupted send,
 * which only an operator's `work.resolved` settles. `sending` is never claimed again.
 */
export const workMachine = lazySetup({
  types: { events: {} as LifecycleEvent<WorkEventType> },
  guards: { hasRetryAt, decisionIs },
}).createMachine({
  id: 'work',
  initial: 'none',
  states: {
    none: { description: 'No work item yet.', on: { 'work.enqueued': 'queued' } },
    queued: {
      description: 'Waiting to be claimed (honouring notBefore).',
      on: { 'work.claimed': 'claimed', 'work.cancelled': 'cancelled', 'work.corrupt': 'corrupt' },
    },
    claimed: {
      description: 'Leased to one claimant (claim token + attempt) until leaseUntil.',
      on: {
        'work.running': 'running',
        'work.sending': 'sending',
        'work.heartbeat': 'claimed',
        'work.succeeded': 'succeeded',
        'work.failed': failed,
        'work.cancelled': 'cancelled',
        'work.lease_expired': 'retry_scheduled',
        'work.acknowledged': 'acknowledged',
        'work.corrupt': 'corrupt',
      },
    },
    running: {
      description: 'The claimant is executing it.',
      on: {
        'work.sending': 'sending',
        'work.heartbeat': 'running',
        'work.succeeded': 'succeeded',
        'work.failed': failed,
        'work.cancelled': 'cancelled',
        'work.lease_expired': 'retry_scheduled',
        'work.acknowledged': 'acknowledged',
        'work.corrupt': 'corrupt',
      },
    },
    sending: {
      description: 'An external send is in flight; never claimed again, never cancelled.',
      on: {
        'work.heartbeat': 'sending',
        'work.succeeded': 'succeeded',
        'work.failed': failed,
        'work.unknown': 'unknown',
        'work.lease_expired': 'unknown',
      },
    },
    succeeded: {
      description: 'Done; waiting for its consumer to acknowledge.',
      on: { 'work.acknowledged': 'acknowledged' },
    },
    failed: { description: 'Failed for good (no retry scheduled).' },
    retry_scheduled: {
      description: 'Waiting for its next attempt (a new claim with a new token).',
      on: { 'work.claimed': 'claimed', 'work.cancelled': 'cancelled', 'work.corrupt': 'corrupt' },
    },
    cancelled: { description: 'Cancelled before any external send.' },
    unknown: {
      description: 'An interrupted send: it may or may not have happened; only an operator resolves it.',
      on: {
        'work.resolved': [
          {
            target: 'succeeded',
            guard: { type: 'decisionIs', params: { decision: 'sent' } },
            description: 'decision is sent',
          },
          {
            target: 'failed',
            guard: { type: 'decisionIs', params: { decision: 'failed' } },
            description: 'decision is failed',
          },
          {
            target: 'retry_scheduled',
            guard: { type: 'decisionIs', params: { decision: 'retry' } },
            description: 'decision is retry',
          },
        ],
      },
    },
    acknowledged: { description: 'Acknowledged by its consumer; final.' },
    corrupt: { description: 'Unreadable or unexecutable; set aside for an operator.' },
  },
});

/** The states of a Work machine, `none` included. */
export type WorkState = StateOf<typeof workMachine>;

/** The work item lifecycle: {@link workMachine} with its vocabulary, invariants and idempotent repeats. */
export const workLifecycle = defineLifecycle({
  aggregate: 'work item',
  streamType: 'work',
  title: 'Work item',
  summary:
    'Unfinished host work on the durable lease surface (delivery sends, schedule fires, task-completion notices), ' +
    'owned by DurableWorkRuntime.',
  invariants: [
    'Every claim carries a fresh claim token and attempt number; work is claimable only from queued or retry_scheduled.',
    'sending is never claimed again: an expired sending lease becomes unknown, and unknown work is never re-sent automatically; only work.resolved (an operator or reconciler) settles it.',
    'work.failed schedules a retry when it carries retryAt, and fails the work for good when it does not.',
    'Lease expiry is recorded as work.lease_expired, never as a silent row edit: claimed or running work goes to retry_scheduled.',
    'Cancel and acknowledge are idempotent: repeating them appends nothing.',
  ],
  machine: workMachine,
  vocabulary: workEvents,
  idempotent: [{ event: 'work.cancelled' }, { event: 'work.acknowledged' }, { event: 'work.resolved' }],
});
