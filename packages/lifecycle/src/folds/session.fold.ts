import { asDomainEvent, type ChannelBinding, type RecordedEvent } from '@demiurge/contracts';
import { NONE } from '../define-lifecycle.js';
import { type SessionEventType, type SessionState, sessionLifecycle } from '../machines/session.machine.js';
import { nextState } from '../transitions.js';

/**
 * A session as its stream says: the session machine's state plus the facts its commands decide on (the plan-mode
 * overlay, busy mode) and the read model shows. The one fold of a session, used by the command side
 * (`@demiurge/sessions`) and the sessions projector alike.
 */
export interface SessionFacts {
  readonly status: SessionState;
  readonly sessionId: string | null;
  readonly title: string | null;
  readonly coreId: string | null;
  readonly binding: ChannelBinding | null;
  readonly parent: { readonly sessionId: string; readonly taskId: string; readonly depth: number } | null;
  readonly mode: 'default' | 'plan';
  readonly busyMode: 'queue' | 'interrupt';
  readonly archivedReason: string | null;
  /** The session stream's version after the last event applied (0 before the first). */
  readonly version: number;
}

/** A session before its first event. */
export const initialSessionFacts: SessionFacts = {
  status: NONE as SessionState,
  sessionId: null,
  title: null,
  coreId: null,
  binding: null,
  parent: null,
  mode: 'default',
  busyMode: 'queue',
  archivedReason: null,
  version: 0,
};

/** The fields one accepted event sets (messages and turn events on the session stream set none). */
function changes(recorded: RecordedEvent): Partial<SessionFacts> {
  const event = asDomainEvent(recorded);
  switch (event.type) {
    case 'session.created': {
      const d = event.data;
      return {
        sessionId: d.sessionId,
        title: d.title,
        coreId: d.coreId,
        binding: d.binding ?? null,
        parent: d.parent ?? null,
      };
    }
    case 'session.updated':
      return { title: event.data.title };
    case 'session.archived':
      return { archivedReason: event.data.reason };
    case 'session.mode_changed':
      return { mode: event.data.mode };
    case 'session.busy_mode_changed':
      return { busyMode: event.data.busyMode };
    default:
      return {};
  }
}

const evolveTo = (session: SessionFacts, event: RecordedEvent, status: SessionState): SessionFacts => ({
  ...session,
  ...changes(event),
  status,
  version: event.streamType === sessionLifecycle.streamType ? event.streamVersion : session.version,
});

/**
 * The session fold, strict: an event the session machine refuses throws `IllegalTransitionError` naming the
 * session.
 * @example
 * const session = events.reduce((s, e) => sessionFold.evolve(s, e), sessionFold.initialState);
 */
export const sessionFold = {
  streamType: sessionLifecycle.streamType,
  initialState: initialSessionFacts,
  evolve(session: SessionFacts, event: RecordedEvent, streamId?: string): SessionFacts {
    return evolveTo(session, event, sessionLifecycle.evolve(session.status, event, streamId));
  },
};

/**
 * The session fold, tolerant: `undefined` for an event the machine refuses (a read model skips it).
 * @example
 * evolveSession(initialSessionFacts, created)?.status; // 'active'
 */
export function evolveSession(session: SessionFacts, event: RecordedEvent): SessionFacts | undefined {
  const status = nextState(sessionLifecycle, session.status, {
    type: event.type as SessionEventType,
    data: event.data,
  });
  return status === undefined ? undefined : evolveTo(session, event, status);
}
