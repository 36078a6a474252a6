import {
  asDomainEvent,
  type DomainEventData,
  type DomainEventType,
  type NewEvent,
  type RecordedEvent,
} from '@demiurge/contracts';
import type { EventStore, Loaded } from '@demiurge/event-store';
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
  readonly tools?: readonly string[] | undefined;
  readonly inputSlots?: 'all' | readonly string[] | undefined;
  readonly outputSlots?: 'all' | readonly string[] | undefined;
  readonly bootstrap?: boolean | undefined;
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

type ModelCall = {
  callId: string;
  toolCallId: string;
  name: string;
  arguments: unknown;
  argumentsError?: string | undefined;
};

/**
 * An event as a fold reads it: its type and its data, typed by the contracts' schema of that type (a recorded
 * event through `asDomainEvent`, or one the engine just appended: the same shape, validated by the store).
 */
export type TurnFact<T extends DomainEventType = DomainEventType> = {
  [K in T]: { readonly type: K; readonly data: DomainEventData<K> };
}[T];

const listed = (events: readonly RecordedEvent[], event: TurnFact): readonly RecordedEvent[] =>
  'streamVersion' in event ? [...events, event as RecordedEvent] : events;

/**
 * An event this process just appended, as a fold reads it: its data as the store recorded it (validated, and
 * typed, by the contracts' schema of its type), without its envelope.
 */
export function appendedFact(store: EventStore, event: NewEvent): TurnFact {
  const { data } = store.registry.validate(event.type, event.data);
  return asDomainEvent({ type: event.type, data } as RecordedEvent);
}

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
export function evolveTurn(turn: TurnRecord, event: TurnFact): TurnRecord {
  const state = assertTransition(turnLifecycle, turn.state, event as never, turn.streamId);
  const next: TurnRecord = { ...turn, state, version: turn.version + 1, events: listed(turn.events, event) };
  if (event.type === 'turn.started') {
    const d = event.data;
    return {
      ...next,
      sessionId: d.sessionId,
      runId: d.runId ?? null,
      inputMessageId: d.inputMessageId ?? null,
      context: d.context ?? [],
      selection: d.selection ?? null,
    };
  }
  if (event.type === 'turn.model_responded') {
    const d = event.data;
    const step: StepRecord = {
      stepId: d.stepId,
      content: d.content,
      calls: d.toolCalls.map(initialToolCall),
      usage: d.usage,
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
export function evolveToolCall(call: ToolCallRecord, event: TurnFact): ToolCallRecord {
  const state = assertTransition(toolCallLifecycle, call.state, event as never, call.streamId);
  const next: ToolCallRecord = { ...call, state, version: call.version + 1, events: listed(call.events, event) };
  switch (event.type) {
    case 'tool_call.requested':
      return { ...next, idempotent: event.data.idempotent };
    case 'tool_call.succeeded':
      return { ...next, output: event.data.output ?? '' };
    case 'tool_call.failed':
      return { ...next, error: event.data.error };
    case 'tool_call.denied':
      return { ...next, denial: { policy: event.data.policy, reason: event.data.reason } };
    case 'tool_call.cancelled':
    case 'tool_call.unknown':
      return { ...next, reason: event.data.reason };
    case 'tool_call.resolved': {
      const { decision, note } = event.data;
      return { ...next, reason: `resolved as ${decision}${note ? `: ${note}` : ''}` };
    }
    default:
      return next;
  }
}

/** The turn with the events of one of its tool calls (by stream id) applied to that call. */
export function evolveCallIn(turn: TurnRecord, toolCallId: string, events: readonly TurnFact[]): TurnRecord {
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
    turn = evolveTurn(turn, asDomainEvent(event));
  }
  const steps: StepRecord[] = [];
  for (const step of turn.steps) {
    const calls: ToolCallRecord[] = [];
    for (const call of step.calls) {
      let loaded = call;
      for (const event of await store.readStream(call.streamId)) {
        if (event.streamType !== toolCallLifecycle.streamType) break;
        loaded = evolveToolCall(loaded, asDomainEvent(event));
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
