import { z } from 'zod';
import { RunId, SessionId, TurnId } from '../ids.js';
import { defineEvent } from '../registry.js';

/**
 * `turn.cancelled`, the turn event the lifecycle adds. `turn.started`, `turn.completed` and
 * `turn.failed` are declared with the session events, where today's runtime records them.
 */
export const TurnCancelled = defineEvent({
  type: 'turn.cancelled',
  schemaVersion: 1,
  description: 'A turn was cancelled; in-flight tool calls are settled and the reason is kept.',
  data: () => z.object({ turnId: TurnId, sessionId: SessionId, reason: z.string().min(1) }),
});

/** One tool call as the model asked for it, with the id the runtime gave its record. */
export const ModelToolCall = z.object({
  /** The provider's call id, echoed back on the tool result message. */
  callId: z.string().min(1),
  toolCallId: z.string().min(1),
  name: z.string().min(1),
  arguments: z.json(),
  /** Set when the model's arguments were not valid JSON: the parse error (`arguments` is then the raw text). */
  argumentsError: z.string().min(1).optional(),
});

/**
 * A model round, recorded whole before anything acts on it: the text and tool calls the provider
 * streamed. A crash after this event never calls the provider again for the same step.
 */
export const TurnModelResponded = defineEvent({
  type: 'turn.model_responded',
  schemaVersion: 1,
  description: 'A model round of a turn was fully received: its text, tool calls and usage (the buffered completion).',
  data: () =>
    z.object({
      turnId: TurnId,
      runId: RunId,
      /** `s<n>`, the model-loop step the tool calls of this round are keyed by. */
      stepId: z.string().min(1),
      provider: z.string().min(1),
      model: z.string().min(1),
      content: z.string(),
      toolCalls: z.array(ModelToolCall),
      usage: z.object({ inputTokens: z.number().int().nonnegative(), outputTokens: z.number().int().nonnegative() }),
    }),
});

export const turnEvents = [TurnCancelled, TurnModelResponded] as const;
