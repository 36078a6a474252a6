import { type Loaded, loadAggregate } from '@demiurge/control-plane';
import type { EventStore } from '@demiurge/event-store';
import { type ToolCallState, type TurnState, toolCallLifecycle, turnLifecycle } from '@demiurge/lifecycle';

/** A tool call as its record says. */
export interface ToolCallRecord extends Loaded<ToolCallState> {
  readonly callId: string;
  readonly name: string;
  readonly arguments: unknown;
  /** The model's arguments were not valid JSON: the parse error (`arguments` is the raw text). */
  readonly argumentsError: string | null;
  readonly idempotent: boolean | null;
  readonly output: string | null;
  readonly error: { code: string; message: string } | null;
  readonly denial: { policy: string; reason: string } | null;
  readonly reason: string | null;
}

/** One model round of the turn (a `turn.model_responded`) and its tool calls' records. */
export interface StepRecord {
  readonly stepId: string;
  readonly content: string;
  readonly calls: readonly ToolCallRecord[];
  readonly usage: { inputTokens: number; outputTokens: number };
}

/** What a delegated turn may use: a subset of tools, the core's slots to run, bootstrap or not. */
export interface TurnSelection {
  readonly tools?: readonly string[];
  readonly inputSlots?: 'all' | readonly string[];
  readonly outputSlots?: 'all' | readonly string[];
  readonly bootstrap?: boolean;
}

/** A turn rebuilt from the log alone: its stream, its model rounds and each tool call's record. */
export interface TurnRecord extends Loaded<TurnState> {
  readonly sessionId: string | null;
  readonly runId: string | null;
  readonly inputMessageId: string | null;
  /** What the input slots added for the model (turn.started). */
  readonly context: readonly { role: 'user' | 'system'; text: string }[];
  /** A delegated turn's selections (turn.started), or null. */
  readonly selection: TurnSelection | null;
  readonly steps: readonly StepRecord[];
}

type ModelCall = { callId: string; toolCallId: string; name: string; arguments: unknown; argumentsError?: string };

/** Rebuilds a turn from its stream and its tool calls' streams; no cache, no in-memory state. */
export async function loadTurn(store: EventStore, turnId: string): Promise<TurnRecord> {
  const loaded = await loadAggregate(store, turnLifecycle, turnId);
  let sessionId: string | null = null;
  let runId: string | null = null;
  let inputMessageId: string | null = null;
  let context: TurnRecord['context'] = [];
  let selection: TurnSelection | null = null;
  const steps: StepRecord[] = [];
  for (const event of loaded.events) {
    const d = event.data as Record<string, unknown>;
    if (event.type === 'turn.started') {
      sessionId = d.sessionId as string;
      runId = (d.runId as string | undefined) ?? null;
      inputMessageId = (d.inputMessageId as string | undefined) ?? null;
      context = (d.context as TurnRecord['context'] | undefined) ?? [];
      selection = (d.selection as TurnSelection | undefined) ?? null;
    } else if (event.type === 'turn.model_responded') {
      const calls: ToolCallRecord[] = [];
      for (const call of d.toolCalls as ModelCall[]) {
        calls.push(await loadToolCall(store, call));
      }
      steps.push({
        stepId: d.stepId as string,
        content: d.content as string,
        calls,
        usage: d.usage as StepRecord['usage'],
      });
    }
  }
  return { ...loaded, sessionId, runId, inputMessageId, context, selection, steps };
}

async function loadToolCall(store: EventStore, call: ModelCall): Promise<ToolCallRecord> {
  const loaded = await loadAggregate(store, toolCallLifecycle, call.toolCallId);
  let idempotent: boolean | null = null;
  let output: string | null = null;
  let error: ToolCallRecord['error'] = null;
  let denial: ToolCallRecord['denial'] = null;
  let reason: string | null = null;
  for (const event of loaded.events) {
    const d = event.data as Record<string, unknown>;
    switch (event.type) {
      case 'tool_call.requested':
        idempotent = d.idempotent as boolean;
        break;
      case 'tool_call.succeeded':
        output = (d.output as string | undefined) ?? '';
        break;
      case 'tool_call.failed':
        error = d.error as ToolCallRecord['error'];
        break;
      case 'tool_call.denied':
        denial = { policy: d.policy as string, reason: d.reason as string };
        break;
      case 'tool_call.cancelled':
      case 'tool_call.unknown':
        reason = d.reason as string;
        break;
      case 'tool_call.resolved':
        reason = `resolved as ${d.decision as string}${d.note ? `: ${d.note as string}` : ''}`;
        break;
    }
  }
  return {
    ...loaded,
    callId: call.callId,
    name: call.name,
    arguments: call.arguments,
    argumentsError: call.argumentsError ?? null,
    idempotent,
    output,
    error,
    denial,
    reason,
  };
}

/** What the model is told about a tool call's outcome. */
export function toolResultText(call: ToolCallRecord): string {
  switch (call.state) {
    case 'succeeded':
      return call.output ?? '';
    case 'failed':
      return `error (${call.error?.code}): ${call.error?.message}`;
    case 'denied':
      return JSON.stringify({
        denied: true,
        policy: call.denial?.policy,
        reason: call.denial?.reason,
        continue_with: ['request approval for this exact call', 'exit plan mode', 'continue with read-only tools'],
      });
    case 'cancelled':
      return `cancelled: ${call.reason}`;
    case 'unknown':
      return (
        `outcome unknown: ${call.reason}. It was started and may or may not have taken effect; it will not be re-run ` +
        (call.idempotent
          ? 'automatically (the tool is idempotent, so calling it again is safe).'
          : 'automatically (the tool is not idempotent: check before calling it again).')
      );
    default:
      return `not run (${call.state})`;
  }
}
