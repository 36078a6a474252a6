import type { ProjectionSource } from '@demiurge/event-store';
import {
  bindingKey,
  type CompactionView,
  SessionCollections,
  type SessionView,
  sessionsProjector,
  type TranscriptEntry,
  type TurnView,
  transcriptKey,
  turnKey,
} from './sessions.projector.js';

/** The `sessions` read model, typed: sessions, transcripts, turns and channel bindings. */
export interface SessionsReader {
  /** One session, or undefined. */
  get(sessionId: string): Promise<SessionView | undefined>;
  /** Every session (archived ones too), in id order. */
  all(): Promise<SessionView[]>;
  /** A session's kept transcript, oldest first. */
  transcript(sessionId: string): Promise<TranscriptEntry[]>;
  /** A session's turns, oldest first. */
  turns(sessionId: string): Promise<TurnView[]>;
  turn(sessionId: string, turnId: string): Promise<TurnView | undefined>;
  /** A session's compactions, oldest first (the last one is what the model's view starts from). */
  compactions(sessionId: string): Promise<CompactionView[]>;
  /** The session bound to a channel conversation, if any. */
  boundSession(binding: { coreId: string; channel: string; conversationKey: string }): Promise<string | undefined>;
}

/**
 * The typed reader of the `sessions` projection.
 * @example
 * const session = await sessionsReader(store).get(sessionId);
 */
export function sessionsReader(store: ProjectionSource): SessionsReader {
  const reader = store.projection(sessionsProjector.name);
  return {
    get: (sessionId) => reader.get<SessionView>(SessionCollections.sessions, sessionId),
    all: () => reader.list<SessionView>(SessionCollections.sessions),
    transcript: (sessionId) =>
      reader.list<TranscriptEntry>(SessionCollections.messages, { prefix: transcriptKey(sessionId, '') }),
    turns: (sessionId) => reader.list<TurnView>(SessionCollections.turns, { prefix: turnKey(sessionId, '') }),
    turn: (sessionId, turnId) => reader.get<TurnView>(SessionCollections.turns, turnKey(sessionId, turnId)),
    compactions: (sessionId) =>
      reader.list<CompactionView>(SessionCollections.compactions, { prefix: `${sessionId}/` }),
    boundSession: (binding) => reader.get<string>(SessionCollections.bindings, bindingKey(binding)),
  };
}
