import {
  type BusyMode,
  ChannelBinding,
  type EventMeta,
  findEvent,
  type IdGenerator,
  IdPrefix,
  type MessageVisibility,
  type NewEvent,
  SessionMode,
} from '@demiurge/contracts';
import { NotFoundError, parseSpec } from '@demiurge/control-plane';
import { type AppendOptions, type AppendStream, commandLoop, type EventStore } from '@demiurge/event-store';
import { initialSessionFacts, type SessionEventType, sessionLifecycle } from '@demiurge/lifecycle';
import { bindingKey, type SessionView, sessionsReader, type TranscriptEntry } from '@demiurge/projector-sessions';
import { z } from 'zod';
import { decideSession, type OpenSessionSpec, type SessionCommand } from './session.decider.js';

export const CreateSessionSpec = z.object({
  title: z.string().min(1),
  coreId: z.string().min(1),
  binding: ChannelBinding.optional(),
  mode: SessionMode.optional(),
  parent: z
    .object({ sessionId: z.string().min(1), taskId: z.string().min(1), depth: z.number().int().positive() })
    .optional(),
});
export type CreateSessionSpec = z.input<typeof CreateSessionSpec>;

export interface MessageSpec {
  readonly sessionId: string;
  readonly role: 'user' | 'assistant' | 'system' | 'tool';
  readonly text: string;
  readonly visibility?: MessageVisibility;
  readonly turnId?: string;
  readonly messageId?: string;
}

export interface SessionRuntimeOptions {
  readonly store: EventStore;
  readonly ids: IdGenerator;
  readonly meta?: Partial<EventMeta>;
}

const SESSION = sessionLifecycle.streamType;

/** The idempotency key of the commit that opens a bound session: one session per binding, across processes. */
export const bindingIdempotencyKey = (binding: ChannelBinding): string => `session.binding:${bindingKey(binding)}`;

/**
 * Sessions: the continuity boundary of a conversation (seed 000). Creation, title, archive, the plan-mode
 * overlay and busy mode, unique channel bindings and messages with their history policy. Decisions read
 * the session's read model (kept in the same commit as its events) and append at its stream version.
 *
 * @example
 * const sessions = new SessionRuntime({ store, ids });
 * const { sessionId } = await sessions.resolve({ coreId: 'default', channel: 'cli', conversationKey: 'me' });
 * await sessions.recordMessage({ sessionId, role: 'user', text: 'hi' });
 */
export class SessionRuntime {
  constructor(private readonly options: SessionRuntimeOptions) {}

  async create(spec: CreateSessionSpec): Promise<SessionView> {
    const parsed = parseSpec('session spec', CreateSessionSpec, spec);
    if (parsed.binding) return (await this.resolve(parsed.binding, { title: parsed.title })).session;
    const sessionId = this.options.ids.next(IdPrefix.session);
    await this.options.store.append(this.openStream(sessionId, parsed), this.appendOptions(sessionId));
    return this.get(sessionId);
  }

  /**
   * The one session bound to (core, channel, conversation key), created on first use. Concurrent
   * callers in any process get the same session (the binding is the append's idempotency key).
   */
  async resolve(
    binding: ChannelBinding,
    options: { title?: string; mode?: SessionMode } = {},
  ): Promise<{ session: SessionView; created: boolean }> {
    const parsed = parseSpec('channel binding', ChannelBinding, binding);
    const existing = await this.reader().boundSession(parsed);
    if (existing) return { session: await this.get(existing), created: false };
    const sessionId = this.options.ids.next(IdPrefix.session);
    const title = options.title ?? `${parsed.channel} ${parsed.conversationKey}`;
    const result = await this.options.store.append(
      this.openStream(sessionId, { title, coreId: parsed.coreId, binding: parsed, mode: options.mode }),
      { ...this.appendOptions(sessionId), idempotencyKey: bindingIdempotencyKey(parsed) },
    );
    const recorded: string = findEvent(result.events, 'session.created')?.data.sessionId ?? sessionId;
    return { session: await this.get(recorded), created: !result.replayed };
  }

  /** The session bound to a channel binding, if one is. */
  boundSession(binding: ChannelBinding): Promise<string | undefined> {
    return this.reader().boundSession(parseSpec('channel binding', ChannelBinding, binding));
  }

  update(sessionId: string, title: string): Promise<SessionView> {
    return this.command({ type: 'rename', sessionId, title });
  }

  /** Archives the session; repeating it is a no-op. */
  archive(sessionId: string, reason: string): Promise<SessionView> {
    return this.command({ type: 'archive', sessionId, reason });
  }

  /** Switches the plan-mode overlay; setting the current mode appends nothing. */
  async setMode(sessionId: string, mode: SessionMode): Promise<SessionView> {
    return this.command({ type: 'set_mode', sessionId, mode: parseSpec('session mode', SessionMode, mode) });
  }

  setBusyMode(sessionId: string, busyMode: BusyMode): Promise<SessionView> {
    return this.command({ type: 'set_busy_mode', sessionId, busyMode });
  }

  /** Records a message; `transient` messages are shown once and never kept in history. */
  async recordMessage(spec: MessageSpec, also: readonly AppendStream[] = []): Promise<string> {
    const messageId = spec.messageId ?? this.options.ids.next(IdPrefix.message);
    await this.command(
      { type: 'admit', sessionId: spec.sessionId, messages: [this.messageEvent({ ...spec, messageId })] },
      also,
    );
    return messageId;
  }

  /** The events of a message, for callers that append it together with other streams. */
  messageEvent(spec: MessageSpec & { messageId: string }): NewEvent<SessionEventType> {
    return {
      type: 'message.recorded',
      data: {
        messageId: spec.messageId,
        sessionId: spec.sessionId,
        role: spec.role,
        text: spec.text,
        visibility: spec.visibility ?? 'persist',
        ...(spec.turnId ? { turnId: spec.turnId } : {}),
      },
    };
  }

  /**
   * A session-stream append checked by the session machine against the current read model:
   * an archived session takes no messages. `events` may be empty (nothing to append).
   */
  async sessionStream(sessionId: string, events: NewEvent<SessionEventType>[]): Promise<AppendStream> {
    return (await this.admissionStream(sessionId, events)).stream;
  }

  /**
   * The session's part of a turn admission ({@link decideSession} `admit`): with `open`, the new session's opening
   * events (its binding, if any, is the commit's idempotency key: a replay means another writer bound it first);
   * with `mode`, the plan-mode switch where it differs; then `messages`. One stream, for one commit with the run
   * and the turn.
   */
  async admissionStream(
    sessionId: string,
    messages: readonly NewEvent<SessionEventType>[],
    options: { open?: OpenSessionSpec | undefined; mode?: SessionMode | undefined } = {},
  ): Promise<{ stream: AppendStream; idempotencyKey?: string }> {
    const open = options.open && parseSpec('session spec', CreateSessionSpec, options.open);
    const mode = options.mode && parseSpec('session mode', SessionMode, options.mode);
    const session = open ? initialSessionFacts : await this.get(sessionId);
    const events = decideSession({ type: 'admit', sessionId, open, mode, messages }, session);
    const stream: AppendStream = {
      streamType: SESSION,
      streamId: sessionId,
      expectedVersion: open ? 'no_stream' : session.version,
      events,
    };
    return open?.binding ? { stream, idempotencyKey: bindingIdempotencyKey(open.binding) } : { stream };
  }

  async get(sessionId: string): Promise<SessionView> {
    const view = await this.reader().get(sessionId);
    if (!view) throw new NotFoundError('session', sessionId);
    return view;
  }

  async list(options: { includeArchived?: boolean } = {}): Promise<SessionView[]> {
    const all = await this.reader().all();
    return options.includeArchived ? all : all.filter((s) => s.status === 'active');
  }

  /**
   * The session's kept messages in order. `forModel` applies the history policy: `model_hidden`
   * messages are for people only and are left out (transient ones are never kept).
   */
  async history(sessionId: string, options: { forModel?: boolean; limit?: number } = {}): Promise<TranscriptEntry[]> {
    await this.get(sessionId);
    const entries = await this.reader().transcript(sessionId);
    const kept = options.forModel ? entries.filter((e) => e.visibility === 'persist') : entries;
    return options.limit === undefined ? kept : kept.slice(-options.limit);
  }

  private openStream(sessionId: string, spec: OpenSessionSpec): AppendStream {
    const events = decideSession({ type: 'open', sessionId, ...spec }, initialSessionFacts);
    return { streamType: SESSION, streamId: sessionId, expectedVersion: 'no_stream', events };
  }

  /** Decides a command over the session as its read model (built by the same fold) says, and appends it. */
  private command(command: SessionCommand, also: readonly AppendStream[] = []): Promise<SessionView> {
    const { sessionId } = command;
    return commandLoop(this.options.store, async () => {
      const session = await this.get(sessionId);
      const stream: AppendStream = {
        streamType: SESSION,
        streamId: sessionId,
        expectedVersion: session.version,
        events: decideSession(command, session),
      };
      return {
        streams: stream.events.length > 0 ? [stream, ...also] : [],
        result: undefined,
        options: this.appendOptions(sessionId),
      };
    }).then(() => this.get(sessionId));
  }

  private appendOptions(sessionId: string): AppendOptions {
    return { meta: { actor: { kind: 'system', id: 'sessions' }, sessionId, ...this.options.meta } };
  }

  private reader() {
    return sessionsReader(this.options.store);
  }
}
