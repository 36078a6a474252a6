import { sessionEvents, sessionModeEvents, TurnCancelled } from '@demiurge/contracts';
import { defineLifecycle, type LifecycleEvent, type StateOf } from '../define-lifecycle.js';
import { lazySetup } from '../lazy-machine.js';

const sessionVocabulary = [...sessionEvents, ...sessionModeEvents, TurnCancelled] as const;
/** The event types the Session machine handles, e.g. for a typed `NewEvent<SessionEventType>`. */
export type SessionEventType = (typeof sessionVocabulary)[number]['type'];

/**
 * The session lifecycle: active until archived. Plan mode (`session.mode_changed`) is a policy
 * overlay, not a state. Messages and turn events recorded on the session stream do not move it.
 */
export const sessionMachine = lazySetup({
  types: { events: {} as LifecycleEvent<SessionEventType> },
}).createMachine({
  id: 'session',
  initial: 'none',
  states: {
    none: { description: 'No session yet.', on: { 'session.created': 'active' } },
    active: {
      description: 'The continuity boundary of a live conversation.',
      on: {
        'session.archived': 'archived',
        'session.updated': 'active',
        'session.mode_changed': 'active',
        'session.busy_mode_changed': 'active',
        'session.compacted': 'active',
        'message.recorded': 'active',
        'turn.started': 'active',
        'turn.completed': 'active',
        'turn.failed': 'active',
        'turn.cancelled': 'active',
      },
    },
    archived: { description: 'Archived; readable for audit, takes no new messages or turns; final.' },
  },
});

/** The states of a Session machine, `none` included. */
export type SessionState = StateOf<typeof sessionMachine>;

/** The session lifecycle: {@link sessionMachine} with its vocabulary, invariants and idempotent repeats. */
export const sessionLifecycle = defineLifecycle({
  aggregate: 'session',
  streamType: 'session',
  title: 'Session',
  summary:
    'The continuity boundary of a conversation across surfaces. Its stream also records the messages and turns of ' +
    'the conversation (message.recorded, turn.*), accepted while the session is active and not moving it.',
  invariants: [
    'Plan mode is a policy overlay: session.mode_changed never changes the session state.',
    'An archived session takes no new messages, turns or mode changes.',
    'Archive is idempotent: repeating it appends nothing.',
    'Compaction is a context overlay: session.compacted never changes the session state, and an archived session is not compacted.',
  ],
  machine: sessionMachine,
  vocabulary: sessionVocabulary,
  idempotent: [{ event: 'session.archived' }],
});
