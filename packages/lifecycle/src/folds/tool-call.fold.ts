import type { ToolCallResolution } from '@demiurge/contracts';
import { NONE } from '../define-lifecycle.js';
import { type ToolCallEventType, type ToolCallState, toolCallLifecycle } from '../machines/tool-call.machine.js';
import { nextState } from '../transitions.js';
import type { Fact } from './fact.js';

/**
 * A tool call (an effect inside a turn) as its stream says: the tool-call machine's state, what was asked
 * (`tool_call.requested`) and its outcome. The one fold of a tool call, used by the turn engine (its turn's
 * calls) and the runs projector alike.
 */
export interface ToolCallFacts {
  readonly status: ToolCallState;
  readonly toolCallId: string | null;
  readonly sessionId: string | null;
  readonly turnId: string | null;
  readonly runId: string | null;
  /** The model-loop step whose round asked for it. */
  readonly stepId: string | null;
  readonly tool: string | null;
  /** The tool's declared effect class for these arguments. */
  readonly effect: string | null;
  /** Whether running it twice is safe (null before it is requested). */
  readonly idempotent: boolean | null;
  /** The arguments of the request (null when it carried none). */
  readonly arguments: unknown;
  /** The text of `tool_call.succeeded`. */
  readonly output: string | null;
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly denial: { readonly policy: string; readonly reason: string } | null;
  /** The reason of `tool_call.cancelled` or `tool_call.unknown`. */
  readonly reason: string | null;
  /** The decision of `tool_call.resolved`, for a call whose outcome was unknown. */
  readonly resolution: ToolCallResolution | null;
}

/** A tool call before its first event. */
export const initialToolCallFacts: ToolCallFacts = {
  status: NONE as ToolCallState,
  toolCallId: null,
  sessionId: null,
  turnId: null,
  runId: null,
  stepId: null,
  tool: null,
  effect: null,
  idempotent: null,
  arguments: null,
  output: null,
  error: null,
  denial: null,
  reason: null,
  resolution: null,
};

/** The fields one accepted event sets. */
function changes(event: Fact): Partial<ToolCallFacts> {
  switch (event.type) {
    case 'tool_call.requested': {
      const d = event.data;
      return {
        toolCallId: d.toolCallId,
        sessionId: d.sessionId,
        turnId: d.turnId,
        runId: d.runId ?? null,
        stepId: d.stepId,
        tool: d.tool,
        effect: d.effect ?? null,
        idempotent: d.idempotent,
        arguments: d.arguments ?? null,
      };
    }
    case 'tool_call.denied':
      return { denial: { policy: event.data.policy, reason: event.data.reason } };
    case 'tool_call.succeeded':
      return { output: event.data.output ?? null };
    case 'tool_call.failed':
      return { error: event.data.error };
    case 'tool_call.cancelled':
    case 'tool_call.unknown':
      return { reason: event.data.reason };
    case 'tool_call.resolved':
      return { resolution: event.data.decision };
    default:
      return {};
  }
}

/**
 * The tool-call fold, strict: an event the tool-call machine refuses throws `IllegalTransitionError` naming the
 * call (its guard picks the target of `tool_call.resolved` from the decision).
 * @example
 * const call = events.map(asDomainEvent).reduce((c, e) => toolCallFold.evolve(c, e, id), toolCallFold.initialState);
 */
export const toolCallFold = {
  streamType: toolCallLifecycle.streamType,
  initialState: initialToolCallFacts,
  evolve(call: ToolCallFacts, event: Fact, streamId?: string): ToolCallFacts {
    return { ...call, ...changes(event), status: toolCallLifecycle.evolve(call.status, event, streamId) };
  },
};

/**
 * The tool-call fold, tolerant: `undefined` for an event the machine refuses (a read model skips it).
 * @example
 * evolveToolCall(initialToolCallFacts, requested)?.status; // 'requested'
 */
export function evolveToolCall(call: ToolCallFacts, event: Fact): ToolCallFacts | undefined {
  const status = nextState(toolCallLifecycle, call.status, { type: event.type as ToolCallEventType, data: event.data });
  return status === undefined ? undefined : { ...call, ...changes(event), status };
}
