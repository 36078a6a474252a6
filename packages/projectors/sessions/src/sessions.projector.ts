import { asDomainEvent, type DomainEvent, type RecordedEvent } from '@demiurge/contracts';
import { defineProjector, type ProjectionTx } from '@demiurge/event-store';
import {
  evolveSession,
  evolveTurn,
  initialSessionFacts,
  initialTurnFacts,
  type SessionFacts,
} from '@demiurge/lifecycle';

/** One session as the board shows it. */
export interface SessionView {
  readonly sessionId: string;
  readonly title: string;
  readonly coreId: string;
  readonly status: 'active' | 'archived';
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly messageCount: number;
  readonly turnCount: number;
  readonly activeTurnId: string | null;
  readonly lastMessage: { readonly role: string; readonly text: string } | null;
  readonly binding: { readonly coreId: string; readonly channel: string; readonly conversationKey: string } | null;
  readonly archivedReason: string | null;
  /** The policy overlay: `plan` denies mutating tools unless approved. */
  readonly mode: 'default' | 'plan';
  /** What a second input does while a turn runs. */
  readonly busyMode: 'queue' | 'interrupt';
  /** The session stream's version after the last event applied (every session-stream event is handled). */
  readonly version: number;
  /** Set on a delegated child session. */
  readonly parent: { readonly sessionId: string; readonly taskId: string; readonly depth: number } | null;
}

/** A message kept in a session's transcript (`transient` messages are not kept). */
export interface TranscriptEntry {
  readonly messageId: string;
  readonly sessionId: string;
  readonly turnId: string | null;
  readonly role: string;
  readonly text: string;
  readonly visibility: 'persist' | 'model_hidden';
  readonly position: number;
  readonly recordedAt: string;
}

export interface TurnView {
  readonly turnId: string;
  readonly sessionId: string;
  readonly runId: string | null;
  readonly status: 'running' | 'completed' | 'failed' | 'cancelled';
  /** Model rounds recorded so far. */
  readonly steps: number;
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly error: { readonly code: string; readonly message: string } | null;
}

/**
 * A compaction of a session's model context (`session.compacted`): the summary and the kept messages it covers.
 * The transcript keeps every message; the latest compaction is what the model's view starts from.
 */
export interface CompactionView {
  readonly compactionId: string;
  readonly sessionId: string;
  readonly trigger: 'auto' | 'manual';
  readonly summary: string;
  readonly fromMessageId: string;
  readonly throughMessageId: string;
  readonly messageCount: number;
  readonly turnId: string | null;
  readonly runId: string | null;
  readonly tokens: { readonly before: number; readonly after: number; readonly window: number };
  readonly position: number;
  readonly recordedAt: string;
}

/** Collections of the `sessions` projector. */
export const SessionCollections = {
  sessions: 'sessions',
  messages: 'messages',
  turns: 'turns',
  bindings: 'bindings',
  /** Running turns: turn id → session id (model rounds carry only the turn id). */
  turnSessions: 'turn-sessions',
  /** Compactions by session, in log order. */
  compactions: 'compactions',
} as const;

const PREVIEW = 120;

/** Transcript and turn ids sort by session, then by time (message and turn ids are time-sortable). */
export const transcriptKey = (sessionId: string, messageId: string) => `${sessionId}/${messageId}`;
export const turnKey = (sessionId: string, turnId: string) => `${sessionId}/${turnId}`;
/** Compactions sort by session, then by log position (zero-padded). */
export const compactionKey = (sessionId: string, position: number) =>
  `${sessionId}/${String(position).padStart(16, '0')}`;
export const bindingKey = (b: { coreId: string; channel: string; conversationKey: string }) =>
  `${b.coreId}/${b.channel}/${b.conversationKey}`;

function updateSession(
  tx: ProjectionTx,
  event: RecordedEvent,
  sessionId: string,
  change: (s: SessionView) => SessionView,
) {
  const session = tx.get<SessionView>(SessionCollections.sessions, sessionId);
  if (!session) return;
  const version =
    event.streamType === 'session' && event.streamId === sessionId ? event.streamVersion : session.version;
  tx.put(SessionCollections.sessions, sessionId, { ...change(session), updatedAt: event.recordedAt, version });
}

/** The view's facts of the session (the view keeps every fact the fold reads back). */
const factsOf = (view: SessionView): SessionFacts => ({ ...initialSessionFacts, ...view });

/**
 * A `session.*` event: the session fold (`evolveSession` in `@demiurge/lifecycle`, the same fold the command side
 * decides on), then the view's counts and times kept. An event the session machine refuses changes nothing.
 */
function applySessionEvent(tx: ProjectionTx, event: RecordedEvent & { data: { sessionId: string } }): void {
  const before = tx.get<SessionView>(SessionCollections.sessions, event.data.sessionId);
  const facts = evolveSession(before ? factsOf(before) : initialSessionFacts, event);
  if (!facts || facts.sessionId === null || facts.title === null || facts.coreId === null) return;
  if (facts.status !== 'active' && facts.status !== 'archived') return;
  const view: SessionView = {
    sessionId: facts.sessionId,
    title: facts.title,
    coreId: facts.coreId,
    status: facts.status,
    createdAt: before?.createdAt ?? event.recordedAt,
    updatedAt: event.recordedAt,
    messageCount: before?.messageCount ?? 0,
    turnCount: before?.turnCount ?? 0,
    activeTurnId: before?.activeTurnId ?? null,
    lastMessage: before?.lastMessage ?? null,
    binding: facts.binding,
    archivedReason: facts.archivedReason,
    mode: facts.mode,
    busyMode: facts.busyMode,
    version: facts.version,
    parent: facts.parent,
  };
  tx.put(SessionCollections.sessions, view.sessionId, view);
  if (!before && view.binding) tx.put(SessionCollections.bindings, bindingKey(view.binding), view.sessionId);
}

/**
 * A turn event on the turn's view: the turn fold (`evolveTurn` in `@demiurge/lifecycle`, the turn engine's fold)
 * gives the status and error; the view counts the model rounds and keeps the times. An event the turn machine
 * refuses changes nothing.
 */
function putTurn(tx: ProjectionTx, event: DomainEvent, before: TurnView | undefined): void {
  const facts = evolveTurn(
    before ? { ...initialTurnFacts, ...before, status: before.status, steps: [] } : initialTurnFacts,
    event,
  );
  if (!facts || facts.status === 'none' || facts.turnId === null || facts.sessionId === null) return;
  const view: TurnView = {
    turnId: facts.turnId,
    sessionId: facts.sessionId,
    runId: facts.runId,
    status: facts.status,
    steps: (before?.steps ?? 0) + facts.steps.length,
    startedAt: before?.startedAt ?? event.recordedAt,
    endedAt: facts.status === 'running' ? null : (before?.endedAt ?? event.recordedAt),
    error: facts.error,
  };
  tx.put(SessionCollections.turns, turnKey(view.sessionId, view.turnId), view);
}

/**
 * The sessions read model: sessions with counts and status, transcripts by history policy,
 * turns, and channel bindings (one session per core + channel + conversation key).
 */
export const sessionsProjector = defineProjector({
  name: 'sessions',
  version: 3,
  handles: [
    'session.created',
    'session.updated',
    'session.archived',
    'session.mode_changed',
    'session.busy_mode_changed',
    'session.compacted',
    'message.recorded',
    'turn.started',
    'turn.model_responded',
    'turn.completed',
    'turn.failed',
    'turn.cancelled',
  ],
  apply(recorded, tx) {
    const event = asDomainEvent(recorded);
    switch (event.type) {
      case 'session.created':
      case 'session.updated':
      case 'session.archived':
      case 'session.mode_changed':
      case 'session.busy_mode_changed': {
        applySessionEvent(tx, event);
        return;
      }
      case 'session.compacted': {
        const d = event.data;
        const view: CompactionView = {
          compactionId: d.compactionId,
          sessionId: d.sessionId,
          trigger: d.trigger,
          summary: d.summary,
          fromMessageId: d.range.fromMessageId,
          throughMessageId: d.range.throughMessageId,
          messageCount: d.range.messageCount,
          turnId: d.turnId ?? null,
          runId: d.runId ?? null,
          tokens: d.tokens,
          position: event.position,
          recordedAt: event.recordedAt,
        };
        tx.put(SessionCollections.compactions, compactionKey(d.sessionId, event.position), view);
        updateSession(tx, event, d.sessionId, (s) => s);
        return;
      }
      case 'message.recorded': {
        const d = event.data;
        if (d.visibility !== 'transient') {
          const entry: TranscriptEntry = {
            messageId: d.messageId,
            sessionId: d.sessionId,
            turnId: d.turnId ?? null,
            role: d.role,
            text: d.text,
            visibility: d.visibility,
            position: event.position,
            recordedAt: event.recordedAt,
          };
          tx.put(SessionCollections.messages, transcriptKey(d.sessionId, d.messageId), entry);
        }
        updateSession(tx, event, d.sessionId, (s) => ({
          ...s,
          messageCount: s.messageCount + 1,
          lastMessage: { role: d.role, text: d.text.length > PREVIEW ? `${d.text.slice(0, PREVIEW - 1)}…` : d.text },
        }));
        return;
      }
      case 'turn.started': {
        const d = event.data;
        putTurn(tx, event, undefined);
        tx.put(SessionCollections.turnSessions, d.turnId, d.sessionId);
        updateSession(tx, event, d.sessionId, (s) => ({ ...s, turnCount: s.turnCount + 1, activeTurnId: d.turnId }));
        return;
      }
      case 'turn.model_responded': {
        const d = event.data;
        const sessionId = tx.get<string>(SessionCollections.turnSessions, d.turnId);
        const turn = sessionId ? tx.get<TurnView>(SessionCollections.turns, turnKey(sessionId, d.turnId)) : undefined;
        if (turn) putTurn(tx, event, turn);
        return;
      }
      case 'turn.completed':
      case 'turn.failed':
      case 'turn.cancelled': {
        const d = event.data;
        const turn = tx.get<TurnView>(SessionCollections.turns, turnKey(d.sessionId, d.turnId));
        if (turn) putTurn(tx, event, turn);
        tx.delete(SessionCollections.turnSessions, d.turnId);
        updateSession(tx, event, d.sessionId, (s) => ({
          ...s,
          activeTurnId: s.activeTurnId === d.turnId ? null : s.activeTurnId,
        }));
        return;
      }
    }
  },
});
