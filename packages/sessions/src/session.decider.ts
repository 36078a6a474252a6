import type { BusyMode, ChannelBinding, NewEvent, RecordedEvent, SessionMode } from '@demiurge/contracts';
import {
  checkEvents,
  type SessionEventType,
  type SessionFacts,
  sessionFold,
  sessionLifecycle,
} from '@demiurge/lifecycle';

/** What opens a session: its title and core, optionally a channel binding, a parent (delegation) and plan mode. */
export interface OpenSessionSpec {
  readonly title: string;
  readonly coreId: string;
  readonly binding?: ChannelBinding | undefined;
  readonly mode?: SessionMode | undefined;
  readonly parent?: { readonly sessionId: string; readonly taskId: string; readonly depth: number } | undefined;
}

/** A command to a session. `admit` is the session's part of a turn admission: open it or switch its mode, then the messages. */
export type SessionCommand =
  | ({ readonly type: 'open'; readonly sessionId: string } & OpenSessionSpec)
  | { readonly type: 'rename'; readonly sessionId: string; readonly title: string }
  | { readonly type: 'archive'; readonly sessionId: string; readonly reason: string }
  | { readonly type: 'set_mode'; readonly sessionId: string; readonly mode: SessionMode }
  | { readonly type: 'set_busy_mode'; readonly sessionId: string; readonly busyMode: BusyMode }
  | {
      readonly type: 'admit';
      readonly sessionId: string;
      /** A session opened by this admission (its stream is new). */
      readonly open?: OpenSessionSpec | undefined;
      /** The plan-mode overlay the input asks for (a change only where it differs). */
      readonly mode?: SessionMode | undefined;
      /** The admission's messages (`message.recorded`). */
      readonly messages: readonly NewEvent<SessionEventType>[];
    };

type SessionEvent = NewEvent<SessionEventType>;

function opened(sessionId: string, spec: OpenSessionSpec): SessionEvent[] {
  const events: SessionEvent[] = [
    {
      type: 'session.created',
      data: {
        sessionId,
        title: spec.title,
        coreId: spec.coreId,
        ...(spec.binding ? { binding: spec.binding } : {}),
        ...(spec.parent ? { parent: spec.parent as never } : {}),
      },
    },
  ];
  if (spec.mode === 'plan') {
    events.push({ type: 'session.mode_changed', data: { sessionId, mode: 'plan', previous: 'default' } });
  }
  return events;
}

const modeChange = (session: SessionFacts, sessionId: string, mode: SessionMode | undefined): SessionEvent[] =>
  mode === undefined || session.mode === mode
    ? []
    : [{ type: 'session.mode_changed', data: { sessionId, mode, previous: session.mode } }];

function wanted(command: SessionCommand, session: SessionFacts): SessionEvent[] {
  const { sessionId } = command;
  switch (command.type) {
    case 'open':
      return opened(sessionId, command);
    case 'rename':
      return [{ type: 'session.updated', data: { sessionId, title: command.title } }];
    case 'archive':
      return [{ type: 'session.archived', data: { sessionId, reason: command.reason } }];
    case 'set_mode':
      return modeChange(session, sessionId, command.mode);
    case 'set_busy_mode':
      return session.busyMode === command.busyMode
        ? []
        : [{ type: 'session.busy_mode_changed', data: { sessionId, busyMode: command.busyMode } }];
    case 'admit':
      return [
        ...(command.open
          ? opened(sessionId, { ...command.open, mode: command.mode ?? command.open.mode })
          : modeChange(session, sessionId, command.mode)),
        ...command.messages,
      ];
  }
}

/**
 * The session's decisions (pure): the events a command appends to the session in `session`, checked by the
 * session machine. Setting the current mode or busy mode, or archiving again, appends nothing; anything the
 * machine refuses (a message to an archived session, opening a session twice) throws `IllegalTransitionError`.
 * @example
 * decideSession({ type: 'set_mode', sessionId, mode: 'plan' }, session); // [session.mode_changed] or []
 */
export function decideSession(command: SessionCommand, session: SessionFacts): SessionEvent[] {
  return checkEvents(sessionLifecycle, session.status, wanted(command, session), command.sessionId);
}

/** The session decider: {@link decideSession} over the one session fold (`sessionFold` in `@demiurge/lifecycle`). */
export const sessionDecider = {
  initialState: sessionFold.initialState,
  decide: decideSession,
  evolve: (session: SessionFacts, event: RecordedEvent) => sessionFold.evolve(session, event, event.streamId),
};
