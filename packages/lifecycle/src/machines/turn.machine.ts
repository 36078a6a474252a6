import { TurnCompleted, TurnFailed, TurnStarted, turnEvents } from '@demiurge/contracts';
import { defineLifecycle, type LifecycleEvent, type StateOf } from '../define-lifecycle.js';
import { lazySetup } from '../lazy-machine.js';

const turnVocabulary = [TurnStarted, TurnCompleted, TurnFailed, ...turnEvents] as const;
/** The event types the Turn machine handles, e.g. for a typed `NewEvent<TurnEventType>`. */
export type TurnEventType = (typeof turnVocabulary)[number]['type'];

/** The turn lifecycle: one user/agent interaction, running until it completes, fails or is cancelled. */
export const turnMachine = lazySetup({
  types: { events: {} as LifecycleEvent<TurnEventType> },
}).createMachine({
  id: 'turn',
  initial: 'none',
  states: {
    none: { description: 'No turn yet.', on: { 'turn.started': 'running' } },
    running: {
      description: 'The provider/tool loop is running.',
      on: {
        'turn.model_responded': 'running',
        'turn.completed': 'completed',
        'turn.failed': 'failed',
        'turn.cancelled': 'cancelled',
      },
    },
    completed: { description: 'Finished with an assistant response; final.' },
    failed: { description: 'Ended with an error; final.' },
    cancelled: { description: 'Cancelled; in-flight tool calls were settled; final.' },
  },
});

/** The states of a Turn machine, `none` included. */
export type TurnState = StateOf<typeof turnMachine>;

/** The turn lifecycle: {@link turnMachine} with its vocabulary and invariants. */
export const turnLifecycle = defineLifecycle({
  aggregate: 'turn',
  streamType: 'turn',
  title: 'Turn',
  summary:
    'One user/agent interaction (context, prompt, trace, tool sequencing), on its own stream: started, one ' +
    'turn.model_responded per model round, then exactly one ending. Its messages are on the session stream.',
  invariants: [
    'A turn ends exactly once: completed, failed or cancelled are final.',
    'A foreground turn is never a task.',
    'A model round is recorded whole (turn.model_responded) before any of its tool calls starts.',
  ],
  machine: turnMachine,
  vocabulary: turnVocabulary,
  idempotent: [{ event: 'turn.cancelled' }],
});
