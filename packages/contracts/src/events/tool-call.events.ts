import { z } from 'zod';
import { IdPrefix, prefixedId, SessionId, TurnId } from '../ids.js';
import { defineEvent } from '../registry.js';

export const ToolCallId = prefixedId(IdPrefix.toolCall);
export type ToolCallId = z.infer<typeof ToolCallId>;

const failure = z.object({ code: z.string().min(1), message: z.string().min(1) });

/** An operator's (or reconciler's) decision on a tool call whose outcome is unknown. */
export const ToolCallResolution = z.enum(['succeeded', 'failed']);
export type ToolCallResolution = z.infer<typeof ToolCallResolution>;

export const ToolCallRequested = defineEvent({
  type: 'tool_call.requested',
  schemaVersion: 1,
  description: 'The model asked for a tool call in a turn; `idempotent` says whether it is safe to run twice.',
  data: () =>
    z.object({
      toolCallId: ToolCallId,
      sessionId: SessionId,
      turnId: TurnId,
      stepId: z.string().min(1),
      tool: z.string().min(1),
      idempotent: z.boolean(),
      runId: z.string().min(1).optional(),
      /** The arguments the model gave (as parsed JSON; the raw text when `argumentsError` is set). */
      arguments: z.json().optional(),
      /** The model's arguments were not valid JSON: the parse error. The call fails with it, never runs. */
      argumentsError: z.string().min(1).optional(),
      /** The tool's declared effect class for these arguments (`read`, `write.file`, `shell`, ...). */
      effect: z.string().min(1).optional(),
    }),
});

export const ToolCallDenied = defineEvent({
  type: 'tool_call.denied',
  schemaVersion: 1,
  description: 'Policy (plan mode, an approval) denied the tool call; the reason explains how to continue.',
  data: () => z.object({ toolCallId: ToolCallId, policy: z.string().min(1), reason: z.string().min(1) }),
});

export const ToolCallStarted = defineEvent({
  type: 'tool_call.started',
  schemaVersion: 1,
  description: 'The tool call was dispatched (intent recorded before the effect).',
  data: () => z.object({ toolCallId: ToolCallId }),
});

export const ToolCallProcessStarted = defineEvent({
  type: 'tool_call.process_started',
  schemaVersion: 1,
  description:
    "A foreground tool call's OS process group (a `shell` call) was spawned, held before its command runs: " +
    'host, spawn id, pid, process group and start marker, committed before the command may run, so the next ' +
    'host start can stop an orphan a killed host left behind (the marker is re-checked before any signal).',
  data: () =>
    z.object({
      toolCallId: ToolCallId,
      spawnId: z.string().min(1),
      host: z.string().min(1),
      pid: z.number().int().positive(),
      pgid: z.number().int().positive(),
      platform: z.string().min(1),
      /** e.g. `linux:<boot id>:<start time in clock ticks>`; absent where the platform offers none. */
      startMarker: z.string().min(1).optional(),
    }),
});

export const ToolCallProcessStopped = defineEvent({
  type: 'tool_call.process_stopped',
  schemaVersion: 1,
  description:
    "A host start stopped a foreground tool call's process group that a killed host left running (its start " +
    'marker re-checked first): the signal that ended it and why.',
  data: () =>
    z.object({
      toolCallId: ToolCallId,
      pid: z.number().int().positive(),
      /** The last signal sent: SIGTERM, or SIGKILL once the grace period ran out. */
      signal: z.enum(['SIGTERM', 'SIGKILL']),
      reason: z.string().min(1),
    }),
});

export const ToolCallSucceeded = defineEvent({
  type: 'tool_call.succeeded',
  schemaVersion: 1,
  description: 'The tool call returned a result.',
  data: () =>
    z.object({
      toolCallId: ToolCallId,
      resultRef: z.string().min(1).optional(),
      /** The (bounded) text the model gets back. */
      output: z.string().optional(),
    }),
});

export const ToolCallFailed = defineEvent({
  type: 'tool_call.failed',
  schemaVersion: 1,
  description: 'The tool call raised an error.',
  data: () => z.object({ toolCallId: ToolCallId, error: failure }),
});

export const ToolCallCancelled = defineEvent({
  type: 'tool_call.cancelled',
  schemaVersion: 1,
  description: 'The tool call was cancelled (turn or run cancellation) before it produced a result.',
  data: () => z.object({ toolCallId: ToolCallId, reason: z.string().min(1) }),
});

export const ToolCallUnknown = defineEvent({
  type: 'tool_call.unknown',
  schemaVersion: 1,
  description: 'A crash left a started effect without an outcome; it is never re-run automatically.',
  data: () => z.object({ toolCallId: ToolCallId, reason: z.string().min(1) }),
});

export const ToolCallResolved = defineEvent({
  type: 'tool_call.resolved',
  schemaVersion: 1,
  description: 'An operator or reconciler decided the outcome of an unknown tool call.',
  data: () => z.object({ toolCallId: ToolCallId, decision: ToolCallResolution, note: z.string().min(1).optional() }),
});

export const toolCallEvents = [
  ToolCallRequested,
  ToolCallDenied,
  ToolCallStarted,
  ToolCallProcessStarted,
  ToolCallProcessStopped,
  ToolCallSucceeded,
  ToolCallFailed,
  ToolCallCancelled,
  ToolCallUnknown,
  ToolCallResolved,
] as const;
