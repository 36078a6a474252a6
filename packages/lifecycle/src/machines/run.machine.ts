import { runEvents } from '@demiurge/contracts';
import { defineLifecycle, type LifecycleEvent, type StateOf } from '../define-lifecycle.js';
import { lazySetup } from '../lazy-machine.js';

/** The event types the Run machine handles, e.g. for a typed `NewEvent<RunEventType>`. */
export type RunEventType = (typeof runEvents)[number]['type'];

/**
 * The run lifecycle (seed 000 "Run"). Checkpoints and the owner lease (`run.owner_*`) do not move
 * the run; they are allowed while it is live (queued owner claims, running, waiting, paused,
 * blocked, cancelling) so a new owner can recover it.
 */
export const runMachine = lazySetup({
  types: { events: {} as LifecycleEvent<RunEventType> },
}).createMachine({
  id: 'run',
  initial: 'none',
  states: {
    none: { description: 'No run yet.', on: { 'run.queued': 'queued' } },
    queued: {
      description: 'Admitted, waiting for an owner to start it.',
      on: {
        'run.started': 'running',
        'run.cancelled': 'cancelled',
        'run.failed': 'failed',
        'run.owner_claimed': 'queued',
        'run.owner_heartbeat': 'queued',
        'run.owner_lease_expired': 'queued',
      },
    },
    running: {
      description: 'Executing under its owner.',
      on: {
        'run.waiting': 'waiting',
        'run.paused': 'paused',
        'run.blocked': 'blocked',
        'run.cancel_requested': 'cancelling',
        'run.completed': 'completed',
        'run.failed': 'failed',
        'run.checkpointed': 'running',
        'run.owner_claimed': 'running',
        'run.owner_heartbeat': 'running',
        'run.owner_lease_expired': 'running',
      },
    },
    waiting: {
      description: 'Waiting on user input, a task or a timer.',
      on: {
        'run.resumed': 'running',
        'run.paused': 'paused',
        'run.cancel_requested': 'cancelling',
        'run.failed': 'failed',
        'run.checkpointed': 'waiting',
        'run.owner_claimed': 'waiting',
        'run.owner_heartbeat': 'waiting',
        'run.owner_lease_expired': 'waiting',
      },
    },
    paused: {
      description:
        'Paused on request: no new step starts until it is resumed; a step under way when the pause came may still end the run.',
      on: {
        'run.resumed': 'running',
        'run.cancel_requested': 'cancelling',
        'run.completed': 'completed',
        'run.failed': 'failed',
        'run.checkpointed': 'paused',
        'run.owner_claimed': 'paused',
        'run.owner_heartbeat': 'paused',
        'run.owner_lease_expired': 'paused',
      },
    },
    blocked: {
      description: 'Blocked; `resumable` on run.blocked says whether it can continue.',
      on: {
        'run.resumed': 'running',
        'run.cancel_requested': 'cancelling',
        'run.failed': 'failed',
        'run.checkpointed': 'blocked',
        'run.owner_claimed': 'blocked',
        'run.owner_heartbeat': 'blocked',
        'run.owner_lease_expired': 'blocked',
      },
    },
    cancelling: {
      description: 'Stopping: no new dispatch; in-flight tool calls and tasks are being settled.',
      on: {
        'run.cancelled': 'cancelled',
        'run.failed': 'failed',
        'run.checkpointed': 'cancelling',
        'run.owner_claimed': 'cancelling',
        'run.owner_heartbeat': 'cancelling',
        'run.owner_lease_expired': 'cancelling',
      },
    },
    cancelled: {
      description: 'Cancelled; run.cancelled says whether it is resumable from its checkpoint.',
      on: { 'run.archived': 'archived' },
    },
    completed: { description: 'Finished successfully.', on: { 'run.archived': 'archived' } },
    failed: { description: 'Ended with an error.', on: { 'run.archived': 'archived' } },
    archived: { description: 'Archived; final.' },
  },
});

/** The states of a Run machine, `none` included. */
export type RunState = StateOf<typeof runMachine>;

/** The run lifecycle: {@link runMachine} with its vocabulary, invariants and idempotent repeats. */
export const runLifecycle = defineLifecycle({
  aggregate: 'run',
  streamType: 'run',
  title: 'Run',
  summary:
    'A durable execution attempt inside a session: status, owner lease, checkpoint lineage and terminal outcome.',
  invariants: [
    'Cancellation is explicit and two-phase once a run has started: run.cancel_requested (stop new dispatch, settle in-flight work) then run.cancelled; a queued run is cancelled directly.',
    'A terminal run (cancelled, completed, failed) never runs again; only run.archived leaves it.',
    'Resume is explicit (run.resumed) and only from waiting, paused or blocked; it never guesses from UI state.',
    'Pause takes effect at the next step boundary: the step under way (a model round, a running tool call, the final answer) is finished and recorded, so a paused run may still complete or fail with that step.',
    'Ownership is a lease recorded as events (run.owner_claimed, run.owner_heartbeat, run.owner_lease_expired) while the run is live, so a new owner can recover it.',
    'Cancel and archive are idempotent: repeating them appends nothing.',
  ],
  machine: runMachine,
  vocabulary: runEvents,
  idempotent: [
    { event: 'run.cancel_requested', alsoIn: ['cancelled'] },
    { event: 'run.cancelled' },
    { event: 'run.archived' },
  ],
});
