import { asDomainEvent, type NewEvent, type RecordedEvent } from '@demiurge/contracts';
import type { EventStore, Loaded } from '@demiurge/event-store';
import {
  type Fact,
  initialToolCallFacts,
  initialTurnFacts,
  type ModelCallFacts,
  type ToolCallFacts,
  type ToolCallState,
  type TurnCoreFacts,
  type TurnFacts,
  type TurnSelectionFacts,
  type TurnState,
  toolCallFold,
  toolCallLifecycle,
  turnFold,
  turnLifecycle,
} from '@demiurge/lifecycle';

/** What the engine keeps of a call's facts (the tool-call fold, `toolCallFold` in `@demiurge/lifecycle`). */
type CallOutcome = Pick<ToolCallFacts, 'idempotent' | 'output' | 'error' | 'denial' | 'reason' | 'resolution'>;

/** A tool call as its record says: the model's request, then the tool-call fold over its stream. */
export interface ToolCallRecord extends Loaded<ToolCallState>, CallOutcome {
  readonly callId: string;
  readonly name: string;
  readonly arguments: unknown;
  /** The model's arguments were not valid JSON: the parse error (`arguments` is the raw text). */
  readonly argumentsError: string | null;
}

/** One model round of the turn (a `turn.model_responded`) and its tool calls' records. */
export interface StepRecord {
  readonly stepId: string;
  readonly content: string;
  readonly calls: readonly ToolCallRecord[];
  readonly usage: { inputTokens: number; outputTokens: number };
}

/** What a delegated turn may use: a subset of tools, the core's slots to run, bootstrap or not. */
export type TurnSelection = TurnSelectionFacts;

/** What a turn runs with, recorded on `turn.started`: the core revision (absent: unversioned), slots and tools. */
export type TurnPin = TurnCoreFacts;

/**
 * A turn rebuilt from the log alone: the turn fold (`turnFold` in `@demiurge/lifecycle`, shared with the
 * projectors) over its stream, with each model round's tool calls as their records.
 */
export interface TurnRecord extends Loaded<TurnState>, Omit<TurnFacts, 'status' | 'steps'> {
  readonly steps: readonly StepRecord[];
}

/**
 * An event as a fold reads it: its type and its data, typed by the contracts' schema of that type (a recorded
 * event through `asDomainEvent`, or one the engine just appended: the same shape, validated by the store).
 */
export type TurnFact = Fact;

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
  const { status, steps, ...facts } = initialTurnFacts;
  return { ...facts, streamId: turnId, state: status, version: 0, events: [], steps: [] };
}

/**
 * One turn event applied (pure): the turn fold (`turnFold`: the state through the turn machine, the facts), the
 * version plus one. A `turn.model_responded` adds a step whose calls are not requested yet (state `none`): their
 * own streams ({@link evolveToolCall} through {@link evolveCallIn}) say the rest.
 */
export function evolveTurn(turn: TurnRecord, event: TurnFact): TurnRecord {
  const { streamId, state, version, events, steps, ...facts } = turn;
  const next = turnFold.evolve({ ...facts, status: state, steps: [] }, event, streamId);
  const { status, steps: added, ...changed } = next;
  return {
    ...changed,
    streamId,
    state: status,
    version: version + 1,
    events: listed(events, event),
    steps: [...steps, ...added.map((step) => ({ ...step, calls: step.calls.map(initialToolCall) }))],
  };
}

/** A call the model asked for, before its stream's first event. */
export function initialToolCall(call: ModelCallFacts): ToolCallRecord {
  const { idempotent, output, error, denial, reason, resolution } = initialToolCallFacts;
  return {
    streamId: call.toolCallId,
    state: toolCallLifecycle.initialState,
    version: 0,
    events: [],
    callId: call.callId,
    name: call.name,
    arguments: call.arguments,
    argumentsError: call.argumentsError,
    idempotent,
    output,
    error,
    denial,
    reason,
    resolution,
  };
}

/** The fold's facts of a turn record (what its deciders decide on). */
export function turnFacts(turn: TurnRecord): TurnFacts {
  const { streamId: _id, state, version: _v, events: _e, steps, ...facts } = turn;
  const modelSteps = steps.map((step) => ({
    ...step,
    calls: step.calls.map((c) => ({
      callId: c.callId,
      toolCallId: c.streamId,
      name: c.name,
      arguments: c.arguments,
      argumentsError: c.argumentsError,
    })),
  }));
  return { ...facts, status: state, steps: modelSteps };
}

/** The fold's facts of a tool-call record (what its decider decides on). */
export function callFacts(call: ToolCallRecord): ToolCallFacts {
  const { idempotent, output, error, denial, reason, resolution } = call;
  return {
    ...initialToolCallFacts,
    status: call.state,
    toolCallId: call.streamId,
    tool: call.name,
    ...{ idempotent, output, error, denial, reason, resolution },
  };
}

/** One tool-call event applied (pure): the tool-call fold (`toolCallFold`: the state, the outcome), the version. */
export function evolveToolCall(call: ToolCallRecord, event: TurnFact): ToolCallRecord {
  const next = toolCallFold.evolve(callFacts(call), event, call.streamId);
  return {
    ...call,
    state: next.status,
    version: call.version + 1,
    events: listed(call.events, event),
    idempotent: next.idempotent,
    output: next.output,
    error: next.error,
    denial: next.denial,
    reason: next.reason,
    resolution: next.resolution,
  };
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
