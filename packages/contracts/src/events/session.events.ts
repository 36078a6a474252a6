import { z } from 'zod';
import { MessageId, RunId, SessionId, TurnId } from '../ids.js';
import { defineEvent } from '../registry.js';
import { TurnCoreCapabilities } from './core.events.js';

/** A channel binding: the same core + channel + conversation key always resolves to one session. */
export const ChannelBinding = z.object({
  coreId: z.string().min(1),
  channel: z.string().min(1),
  conversationKey: z.string().min(1),
});
export type ChannelBinding = z.infer<typeof ChannelBinding>;

export const SessionCreated = defineEvent({
  type: 'session.created',
  schemaVersion: 1,
  description: 'A session (the continuity boundary of a conversation) was created.',
  data: () =>
    z.object({
      sessionId: SessionId,
      title: z.string().min(1),
      coreId: z.string().min(1),
      binding: ChannelBinding.optional(),
      /** A delegated child session: the parent session, the agent.spawn task and the delegation depth (1 = child). */
      parent: z
        .object({ sessionId: SessionId, taskId: z.string().min(1), depth: z.number().int().positive() })
        .optional(),
    }),
});

export const SessionUpdated = defineEvent({
  type: 'session.updated',
  schemaVersion: 1,
  description: "A session's title changed.",
  data: () => z.object({ sessionId: SessionId, title: z.string().min(1) }),
});

export const SessionArchived = defineEvent({
  type: 'session.archived',
  schemaVersion: 1,
  description: 'A session was archived; it stays readable for audit.',
  data: () => z.object({ sessionId: SessionId, reason: z.string().min(1) }),
});

/**
 * How a message takes part in later model context: `persist` (history), `model_hidden`
 * (kept for people, never sent to the model) or `transient` (shown once, not in history).
 */
export const MessageVisibility = z.enum(['persist', 'model_hidden', 'transient']);
export type MessageVisibility = z.infer<typeof MessageVisibility>;

export const MessageRecorded = defineEvent({
  type: 'message.recorded',
  schemaVersion: 1,
  description: 'A user, assistant, system or tool message was recorded in a session.',
  data: () =>
    z.object({
      messageId: MessageId,
      sessionId: SessionId,
      turnId: TurnId.optional(),
      role: z.enum(['user', 'assistant', 'system', 'tool']),
      text: z.string(),
      visibility: MessageVisibility,
    }),
});

export const TurnStarted = defineEvent({
  type: 'turn.started',
  schemaVersion: 1,
  description: 'A turn (one user/agent interaction) began in a session.',
  data: () =>
    z.object({
      turnId: TurnId,
      sessionId: SessionId,
      runId: RunId.optional(),
      inputMessageId: MessageId.optional(),
      /** Context the core's input slots added for this turn's model rounds (kept here so a resume rebuilds it). */
      context: z.array(z.object({ role: z.enum(['user', 'system']), text: z.string() })).optional(),
      /** A delegated turn's selections: the tools the model may see and call, and the core's slots it runs. */
      selection: z
        .object({
          tools: z.array(z.string().min(1)).optional(),
          inputSlots: z.union([z.literal('all'), z.array(z.string().min(1))]).optional(),
          outputSlots: z.union([z.literal('all'), z.array(z.string().min(1))]).optional(),
          bootstrap: z.boolean().optional(),
        })
        .optional(),
      /** The turn's pin: the core revision, slots and tools it runs with (absent in logs older than revisions). */
      core: TurnCoreCapabilities.optional(),
      /** The root of the turn's file and shell tools when it is not the host's workspace (an evolve's working copy). */
      workspace: z.string().min(1).optional(),
    }),
});

export const Usage = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
});

export const TurnCompleted = defineEvent({
  type: 'turn.completed',
  schemaVersion: 1,
  description: 'A turn finished with an assistant response.',
  data: () =>
    z.object({
      turnId: TurnId,
      sessionId: SessionId,
      outputMessageId: MessageId.optional(),
      usage: Usage.optional(),
    }),
});

export const TurnFailed = defineEvent({
  type: 'turn.failed',
  schemaVersion: 1,
  description: 'A turn ended with an error.',
  data: () =>
    z.object({
      turnId: TurnId,
      sessionId: SessionId,
      error: z.object({ code: z.string().min(1), message: z.string().min(1) }),
    }),
});

/**
 * The older part of a session's model context was replaced by a summary the model wrote. The transcript keeps
 * every original message; only what later model requests send changes: the summary, the messages after
 * `range.throughMessageId`, and the pinned context (plan mode, open tasks, pending approvals). A later
 * compaction covers the earlier one (its summary is part of the text summarized), so the latest one applies.
 */
export const SessionCompacted = defineEvent({
  type: 'session.compacted',
  schemaVersion: 1,
  description:
    "A session's older model context was replaced by a summary (the transcript keeps every message; later requests send the summary, the messages after the range and the pinned context).",
  data: () =>
    z.object({
      sessionId: SessionId,
      /** Unique per session, e.g. `cmp_<n>` (the n-th compaction of the session). */
      compactionId: z.string().min(1),
      /** `auto`: the next request would have passed the threshold; `manual`: an operator asked. */
      trigger: z.enum(['auto', 'manual']),
      summary: z.string().min(1),
      /** The kept messages the summary covers, from the session's first message through `throughMessageId`. */
      range: z.object({
        fromMessageId: MessageId,
        throughMessageId: MessageId,
        /** Messages sent to the model (history policy `persist`) the range covers. */
        messageCount: z.number().int().positive(),
      }),
      /** The turn (and run) whose model round the compaction preceded (auto). */
      turnId: TurnId.optional(),
      runId: RunId.optional(),
      provider: z.string().min(1),
      model: z.string().min(1),
      /** The estimated size of the request that asked for it, and of the context after, against the window. */
      tokens: z.object({
        before: z.number().int().nonnegative(),
        after: z.number().int().nonnegative(),
        window: z.number().int().positive(),
      }),
      usage: z.object({ inputTokens: z.number().int().nonnegative(), outputTokens: z.number().int().nonnegative() }),
    }),
});

export const sessionEvents = [
  SessionCreated,
  SessionUpdated,
  SessionArchived,
  MessageRecorded,
  TurnStarted,
  TurnCompleted,
  TurnFailed,
  SessionCompacted,
] as const;
