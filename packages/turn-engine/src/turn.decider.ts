import { asDomainEvent, type NewEvent, type RecordedEvent } from '@demiurge/contracts';
import {
  checkEvents,
  type ToolCallEventType,
  type ToolCallFacts,
  type TurnEventType,
  type TurnFacts,
  toolCallFold,
  toolCallLifecycle,
  turnFold,
  turnLifecycle,
} from '@demiurge/lifecycle';

type Failure = { readonly code: string; readonly message: string };

/** How a turn ends: its answer (completed), an error (failed) or a cancel's reason. */
export type TurnCommand =
  | {
      readonly type: 'complete';
      readonly turnId: string;
      readonly sessionId: string;
      readonly outputMessageId?: string | undefined;
      readonly usage: { readonly inputTokens: number; readonly outputTokens: number };
    }
  | { readonly type: 'fail'; readonly turnId: string; readonly sessionId: string; readonly error: Failure }
  | { readonly type: 'cancel'; readonly turnId: string; readonly sessionId: string; readonly reason: string };

function turnEvent(command: TurnCommand): NewEvent<TurnEventType> {
  const { turnId, sessionId } = command;
  switch (command.type) {
    case 'complete': {
      const { outputMessageId, usage } = command;
      return {
        type: 'turn.completed',
        data: { turnId, sessionId, ...(outputMessageId ? { outputMessageId } : {}), usage },
      };
    }
    case 'fail':
      return { type: 'turn.failed', data: { turnId, sessionId, error: command.error } };
    case 'cancel':
      return { type: 'turn.cancelled', data: { turnId, sessionId, reason: command.reason } };
  }
}

/**
 * A turn's ending (pure), checked by the turn machine: a turn ends exactly once. Cancelling a cancelled turn
 * appends nothing (an idempotent repeat); any other second ending throws `IllegalTransitionError`.
 * @example
 * decideTurn({ type: 'fail', turnId, sessionId, error }, turn); // [turn.failed]
 */
export function decideTurn(command: TurnCommand, turn: TurnFacts): NewEvent<TurnEventType>[] {
  return checkEvents(turnLifecycle, turn.status, [turnEvent(command)], command.turnId);
}

/** The turn decider: {@link decideTurn} over the one turn fold (`turnFold` in `@demiurge/lifecycle`). */
export const turnDecider = {
  initialState: turnFold.initialState,
  decide: decideTurn,
  evolve: (turn: TurnFacts, event: RecordedEvent) => turnFold.evolve(turn, asDomainEvent(event), event.streamId),
};

/** What the engine does to one tool call after the model asked for it. */
export type ToolCallCommand =
  | { readonly type: 'start'; readonly toolCallId: string }
  | { readonly type: 'deny'; readonly toolCallId: string; readonly policy: string; readonly reason: string }
  | { readonly type: 'succeed'; readonly toolCallId: string; readonly output: string }
  | { readonly type: 'fail'; readonly toolCallId: string; readonly error: Failure }
  /** Its owner is gone and no outcome was recorded: it may have taken effect (never re-run). */
  | { readonly type: 'mark_unknown'; readonly toolCallId: string; readonly reason: string }
  /** The cancel contract: a call not started is cancelled, a started one is unknown, a settled one is left. */
  | { readonly type: 'settle_cancel'; readonly toolCallId: string; readonly reason: string };

function callEvents(command: ToolCallCommand, call: ToolCallFacts): NewEvent<ToolCallEventType>[] {
  const { toolCallId } = command;
  switch (command.type) {
    case 'start':
      return [{ type: 'tool_call.started', data: { toolCallId } }];
    case 'deny':
      return [{ type: 'tool_call.denied', data: { toolCallId, policy: command.policy, reason: command.reason } }];
    case 'succeed':
      return [{ type: 'tool_call.succeeded', data: { toolCallId, output: command.output } }];
    case 'fail':
      return [{ type: 'tool_call.failed', data: { toolCallId, error: command.error } }];
    case 'mark_unknown':
      return [{ type: 'tool_call.unknown', data: { toolCallId, reason: command.reason } }];
    case 'settle_cancel':
      return call.status === 'requested'
        ? [{ type: 'tool_call.cancelled', data: { toolCallId, reason: command.reason } }]
        : call.status === 'started'
          ? [{ type: 'tool_call.unknown', data: { toolCallId, reason: command.reason } }]
          : [];
  }
}

/**
 * A tool call's decisions (pure), checked by the tool-call machine: a call runs at most once and settles once.
 * Settling a call already settled appends nothing; anything else the machine refuses (starting a denied call,
 * a second outcome) throws `IllegalTransitionError`.
 * @example
 * decideToolCall({ type: 'settle_cancel', toolCallId, reason }, call); // [tool_call.unknown] for a started call
 */
export function decideToolCall(command: ToolCallCommand, call: ToolCallFacts): NewEvent<ToolCallEventType>[] {
  return checkEvents(toolCallLifecycle, call.status, callEvents(command, call), command.toolCallId);
}

/** The tool-call decider: {@link decideToolCall} over the one tool-call fold (`toolCallFold`). */
export const toolCallDecider = {
  initialState: toolCallFold.initialState,
  decide: decideToolCall,
  evolve: (call: ToolCallFacts, event: RecordedEvent) =>
    toolCallFold.evolve(call, asDomainEvent(event), event.streamId),
};
