import { slotEvents } from '@demiurge/contracts';
import { defineLifecycle, type LifecycleEvent, type StateOf } from '../define-lifecycle.js';
import { lazySetup } from '../lazy-machine.js';

/** The event types the Slot machine handles, e.g. for a typed `NewEvent<SlotEventType>`. */
export type SlotEventType = (typeof slotEvents)[number]['type'];

/** One invocation of an Agent Core slot: started, then finished, failed or timed out. */
export const slotMachine = lazySetup({
  types: { events: {} as LifecycleEvent<SlotEventType> },
}).createMachine({
  id: 'slot',
  initial: 'none',
  states: {
    none: { description: 'No invocation yet.', on: { 'slot.started': 'running' } },
    running: {
      description: 'The slot module is running.',
      on: { 'slot.finished': 'finished', 'slot.failed': 'failed', 'slot.timed_out': 'timed_out' },
    },
    finished: { description: 'Returned; final.' },
    failed: { description: 'Raised or broke a rule; final.' },
    timed_out: { description: 'Ran past its timeout and was abandoned; final.' },
  },
});

/** The states of a Slot machine, `none` included. */
export type SlotState = StateOf<typeof slotMachine>;

/** The slot-invocation lifecycle: {@link slotMachine} with its vocabulary and invariants. */
export const slotLifecycle = defineLifecycle({
  aggregate: 'slot',
  streamType: 'slot_run',
  title: 'Slot run',
  summary: 'One invocation of an Agent Core slot (bootstrap, input or output phase, serial or parallel).',
  invariants: [
    'An invocation ends exactly once.',
    'A parallel slot cannot change the prompt, the response or the history: such a call fails the invocation.',
  ],
  machine: slotMachine,
  vocabulary: slotEvents,
});
