import type { RecordedEvent } from '@demiurge/contracts';
import type { Loaded } from '@demiurge/control-plane';
import type { EventStore } from '@demiurge/event-store';
import {
  assertTransition,
  type ToolCallState,
  type TurnState,
  toolCallLifecycle,
  turnLifecycle,
} from '@demiurge/lifecycle';

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
/** An event to fold: a recorded one, or one just appended (its type and data). */
type Foldable = Pick<RecordedEvent, 'type' | 'data'>;

const listed = (events: readonly RecordedEvent[], event: Foldable): readonly RecordedEvent[] =>
  'streamVersion' in event ? [...events, event as RecordedEvent] : events;

/** A turn before its first event (state `none`, version 0). */
export function initialTurn(turnId: string): TurnRecord {
  return {
    streamId: turnId,
    state: turnLifecycle.initialState,
    version: 0,
    events: [],
    sessionId: null,
    runId: null,
    inputMessageId: null,
    context: [],
    selection: null,
    steps: [],
  };
}

/**
 * One turn event applied (pure): the state through the turn machine, the version plus one, and the facts.
 * A `turn.model_responded` adds a step whose calls are not requested yet (state `none`): their own streams
 * ({@link evolveToolCall} through {@link evolveCallIn}) say the rest.
 */
export function evolveTurn(turn: TurnRecord, event: Foldable): TurnRecord {
  const state = assertTransition(turnLifecycle, turn.state, event as never, turn.streamId);
  const next: TurnRecord = { ...turn, state, version: turn.version + 1, events: listed(turn.events, event) };
  const d = event.data as Record<string, unknown>;
  if (event.type === 'turn.started') {
    return {
      ...next,
      sessionId: d.sessionId as string,
      runId: (d.runId as string | undefined) ?? null,
      inputMessageId: (d.inputMessageId as string | undefined) ?? null,
      context: (d.context as TurnRecord['context'] | undefined) ?? [],
      selection: (d.selection as TurnSelection | undefined) ?? null,
    };
  }
  if (event.type === 'turn.model_responded') {
    const step: StepRecord = {
      stepId: d.stepId as string,
      content: d.content as string,
      calls: (d.toolCalls as ModelCall[]).map(initialToolCall),
      usage: d.usage as StepRecord['usage'],
    };
    return { ...next, steps: [...turn.steps, step] };
  }
  return next;
}

/** A call the model asked for, before its stream's first event. */
export function initialToolCall(call: ModelCall): ToolCallRecord {
  return {
    streamId: call.toolCallId,
    state: toolCallLifecycle.initialState,
    version: 0,
    events: [],
    callId: call.callId,
    name: call.name,
    arguments: call.arguments,
    argumentsError: call.argumentsError ?? null,
    idempotent: null,
    output: null,
    error: null,
    denial: null,
    reason: null,
  };
}

/** One tool-call event applied (pure): the state through the tool-call machine, the version, the outcome. */
export function evolveToolCall(call: ToolCallRecord, event: Foldable): ToolCallRecord {
  const state = assertTransition(toolCallLifecycle, call.state, event as never, call.streamId);
  const next: ToolCallRecord = { ...call, state, version: call.version + 1, events: listed(call.events, event) };
  const d = event.data as Record<string, unknown>;
  switch (event.type) {
    case 'tool_call.requested':
      return { ...next, idempotent: d.idempotent as boolean };
    case 'tool_call.succeeded':
      return { ...next, output: (d.output as string | undefined) ?? '' };
    case 'tool_call.failed':
      return { ...next, error: d.error as ToolCallRecord['error'] };
    case 'tool_call.denied':
      return { ...next, denial: { policy: d.policy as string, reason: d.reason as string } };
    case 'tool_call.cancelled':
    case 'tool_call.unknown':
      return { ...next, reason: d.reason as string };
    case 'tool_call.resolved':
      return { ...next, reason: `resolved as ${d.decision as string}${d.note ? `: ${d.note as string}` : ''}` };
    default:
      return next;
  }
}

/** The turn with the events of one of its tool calls (by stream id) applied to that call. */
export function evolveCallIn(turn: TurnRecord, toolCallId: string, events: readonly Foldable[]): TurnRecord {
  if (events.length === 0) return turn;
  return {
    ...turn,
    steps: turn.steps.map((step) =>
      step.calls.some((c) => c.streamId === toolCallId)
        ? {
            ...step,
            calls: step.calls.map((c) => (c.streamId === toolCallId ? events.reduce(evolveToolCall, c) : c)),
          }
        : step,
    ),
  };
}

/** A call of the turn by its stream id. */
export function callOf(turn: TurnRecord, toolCallId: string): ToolCallRecord | undefined {
  for (const step of turn.steps) {
    const call = step.calls.find((c) => c.streamId === toolCallId);
    if (call) return call;
  }
  return undefined;
}

/** Rebuilds a turn from its stream and its tool calls' streams (resume, recovery): no cache, no in-memory state. */
export async function loadTurn(store: EventStore, turnId: string): Promise<TurnRecord> {
  let turn = initialTurn(turnId);
  for (const event of await store.readStream(turnId)) {
    if (event.streamType !== turnLifecycle.streamType) break;
    turn = evolveTurn(turn, event);
  }
  const steps: StepRecord[] = [];
  for (const step of turn.steps) {
    const calls: ToolCallRecord[] = [];
    for (const call of step.calls) {
      let loaded = call;
      for (const event of await store.readStream(call.streamId)) {
        if (event.streamType !== toolCallLifecycle.streamType) break;
        loaded = evolveToolCall(loaded, event);
      }
      calls.push(loaded);
    }
    steps.push({ ...step, calls });
  }
  return { ...turn, steps };
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
