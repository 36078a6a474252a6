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
      description:
        'The history began, with its first revision in the same commit, or with the claim of an evolve of the unversioned working copy (a host runs it until a revision is recorded).',
      on: {
        'core.revision_saved': 'versioned',
        'core.evolve_claimed': 'registered',
        'core.evolve_released': 'registered',
      },
    },
    versioned: {
      description:
        'The last recorded revision is current; another one may follow. An evolve claims the scope evolve:<core> and releases it.',
      on: {
        'core.revision_saved': 'versioned',
        'core.evolve_claimed': 'versioned',
        'core.evolve_released': 'versioned',
      },
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
    'At most one evolve task holds evolve:<core>: a claim is appended at the stream version its host read, and supersedes only a claim whose task ended or whose host is gone.',
  ],
  machine: coreMachine,
  vocabulary: coreEvents,
});
