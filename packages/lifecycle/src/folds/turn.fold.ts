import { NONE } from '../define-lifecycle.js';
import { type TurnEventType, type TurnState, turnLifecycle } from '../machines/turn.machine.js';
import { nextState } from '../transitions.js';
import type { Fact } from './fact.js';

/** One tool call as the model asked for it in a round (before its own stream says more). */
export interface ModelCallFacts {
  /** The provider's call id, echoed back on the tool result. */
  readonly callId: string;
  /** The id (and stream) of the call's record. */
  readonly toolCallId: string;
  readonly name: string;
  readonly arguments: unknown;
  /** The model's arguments were not valid JSON: the parse error (`arguments` is the raw text). */
  readonly argumentsError: string | null;
}

/** One model round of a turn (`turn.model_responded`). */
export interface TurnStepFacts {
  readonly stepId: string;
  readonly content: string;
  readonly calls: readonly ModelCallFacts[];
  readonly usage: { readonly inputTokens: number; readonly outputTokens: number };
}

/** What a delegated turn may use: a subset of tools, the core's slots to run, bootstrap or not. */
export interface TurnSelectionFacts {
  readonly tools?: readonly string[] | undefined;
  readonly inputSlots?: 'all' | readonly string[] | undefined;
  readonly outputSlots?: 'all' | readonly string[] | undefined;
  readonly bootstrap?: boolean | undefined;
}

/** What a turn runs with (its pin on turn.started): the core revision (absent: unversioned), slots, tools. */
export interface TurnCoreFacts {
  readonly coreId: string;
  readonly revision?: string | undefined;
  readonly slots: readonly { readonly id: string; readonly phase: string; readonly version: string }[];
  readonly tools: readonly string[];
}

/**
 * A turn as its stream says: the turn machine's state, what started it (session, run, input, context,
 * selection), its model rounds, and how it ended. The one fold of a turn, used by the turn engine and the
 * projectors alike.
 */
export interface TurnFacts {
  readonly status: TurnState;
  readonly turnId: string | null;
  readonly sessionId: string | null;
  readonly runId: string | null;
  readonly inputMessageId: string | null;
  /** What the input slots added for the model (turn.started). */
  readonly context: readonly { readonly role: 'user' | 'system'; readonly text: string }[];
  /** A delegated turn's selections (turn.started), or null. */
  readonly selection: TurnSelectionFacts | null;
  /** The turn's pin (turn.started): the core revision, slots and tools it runs with; null in older logs. */
  readonly core: TurnCoreFacts | null;
  /** The root of its file and shell tools when not the host's workspace (turn.started), or null. */
  readonly workspace: string | null;
  readonly steps: readonly TurnStepFacts[];
  /** The error of `turn.failed`, or the reason of `turn.cancelled` as one (`code: 'cancelled'`). */
  readonly error: { readonly code: string; readonly message: string } | null;
}

/** A turn before its first event. */
export const initialTurnFacts: TurnFacts = {
  status: NONE as TurnState,
  turnId: null,
  sessionId: null,
  runId: null,
  inputMessageId: null,
  context: [],
  selection: null,
  core: null,
  workspace: null,
  steps: [],
  error: null,
};

/** The fields one accepted event sets. */
function changes(turn: TurnFacts, event: Fact): Partial<TurnFacts> {
  switch (event.type) {
    case 'turn.started': {
      const d = event.data;
      return {
        turnId: d.turnId,
        sessionId: d.sessionId,
        runId: d.runId ?? null,
        inputMessageId: d.inputMessageId ?? null,
        context: d.context ?? [],
        selection: d.selection ?? null,
        core: d.core ?? null,
        workspace: d.workspace ?? null,
      };
    }
    case 'turn.model_responded': {
      const d = event.data;
      const calls = d.toolCalls.map((c) => ({
        callId: c.callId,
        toolCallId: c.toolCallId,
        name: c.name,
        arguments: c.arguments,
        argumentsError: c.argumentsError ?? null,
      }));
      return { steps: [...turn.steps, { stepId: d.stepId, content: d.content, calls, usage: d.usage }] };
    }
    case 'turn.failed':
      return { error: event.data.error };
    case 'turn.cancelled':
      return { error: { code: 'cancelled', message: event.data.reason } };
    default:
      return {};
  }
}

/**
 * The turn fold, strict: an event the turn machine refuses throws `IllegalTransitionError` naming the turn.
 * @example
 * const turn = events.map(asDomainEvent).reduce((t, e) => turnFold.evolve(t, e, turnId), turnFold.initialState);
 */
export const turnFold = {
  streamType: turnLifecycle.streamType,
  initialState: initialTurnFacts,
  evolve(turn: TurnFacts, event: Fact, streamId?: string): TurnFacts {
    return { ...turn, ...changes(turn, event), status: turnLifecycle.evolve(turn.status, event, streamId) };
  },
};

/**
 * The turn fold, tolerant: `undefined` for an event the machine refuses (a read model skips it).
 * @example
 * evolveTurn(initialTurnFacts, started)?.status; // 'running'
 */
export function evolveTurn(turn: TurnFacts, event: Fact): TurnFacts | undefined {
  const status = nextState(turnLifecycle, turn.status, { type: event.type as TurnEventType, data: event.data });
  return status === undefined ? undefined : { ...turn, ...changes(turn, event), status };
}
