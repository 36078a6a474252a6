import { approvalEvents } from '@demiurge/contracts';
import { defineLifecycle, type LifecycleEvent, type StateOf } from '../define-lifecycle.js';
import { lazySetup } from '../lazy-machine.js';

/** The event types the Approval machine handles, e.g. for a typed `NewEvent<ApprovalEventType>`. */
export type ApprovalEventType = (typeof approvalEvents)[number]['type'];

/** The approval lifecycle: a person's answer to an action that policy blocked. */
export const approvalMachine = lazySetup({
  types: { events: {} as LifecycleEvent<ApprovalEventType> },
}).createMachine({
  id: 'approval',
  initial: 'none',
  states: {
    none: { description: 'No approval yet.', on: { 'approval.requested': 'requested' } },
    requested: {
      description: 'Waiting for a person to answer.',
      on: { 'approval.granted': 'granted', 'approval.denied': 'denied', 'approval.expired': 'expired' },
    },
    granted: {
      description: 'Granted; usable once.',
      on: { 'approval.consumed': 'consumed', 'approval.expired': 'expired' },
    },
    denied: { description: 'Denied; final.' },
    expired: { description: 'Not answered, or not used, in time; final.' },
    consumed: { description: 'The granted action ran; final.' },
  },
});

/** The states of a Approval machine, `none` included. */
export type ApprovalState = StateOf<typeof approvalMachine>;

/** The approval lifecycle: {@link approvalMachine} with its vocabulary, invariants and idempotent repeats. */
export const approvalLifecycle = defineLifecycle({
  aggregate: 'approval',
  streamType: 'approval',
  title: 'Approval',
  summary: 'A request for a person to allow an action that policy (plan mode, write-shaped tools) blocks by default.',
  invariants: [
    'A grant is consumed at most once; a consumed, denied or expired approval cannot authorize anything.',
    'A grant that is not used in time expires.',
  ],
  machine: approvalMachine,
  vocabulary: approvalEvents,
  idempotent: [{ event: 'approval.expired' }],
});
