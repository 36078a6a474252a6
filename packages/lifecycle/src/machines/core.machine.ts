import { coreEvents } from '@demiurge/contracts';
import { defineLifecycle, type LifecycleEvent, type StateOf } from '../define-lifecycle.js';
import { lazySetup } from '../lazy-machine.js';

/** The event types the Core machine handles. */
export type CoreEventType = (typeof coreEvents)[number]['type'];

/**
 * An Agent Core's revision history (stream `core:<coreId>`): unversioned until its first revision, then
 * versioned; every later save, rollback or evolve makes another revision current.
 */
export const coreMachine = lazySetup({
  types: { events: {} as LifecycleEvent<CoreEventType> },
}).createMachine({
  id: 'core',
  initial: 'none',
  states: {
    none: {
      description: 'No revision recorded: a host runs the working copy.',
      on: { 'core.registered': 'registered' },
    },
    registered: {
      description: 'The history began; its first revision is recorded in the same commit.',
      on: { 'core.revision_saved': 'versioned' },
    },
    versioned: {
      description: 'The last recorded revision is current; another one may follow.',
      on: { 'core.revision_saved': 'versioned' },
    },
  },
});

/** The states of a Core machine, `none` included. */
export type CoreState = StateOf<typeof coreMachine>;

/** The core-revision lifecycle: {@link coreMachine} with its vocabulary and invariants. */
export const coreLifecycle = defineLifecycle({
  aggregate: 'core',
  streamType: 'core',
  title: 'Agent Core revisions',
  summary:
    "An Agent Core's revisions: immutable content-addressed snapshots, each made current by one event (docs/core-revisions.md).",
  invariants: [
    'A revision is current from the event that records it; its snapshot was written before the event.',
    "Each revision's parent is the revision current before it (a rollback records an older snapshot again, as a new revision).",
  ],
  machine: coreMachine,
  vocabulary: coreEvents,
});
