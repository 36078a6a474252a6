import { asDomainEvent, isEvent, type RecordedEvent, toolCallEvents } from '@demiurge/contracts';
import type { ProjectionTx } from '@demiurge/event-store';
import { evolveToolCall, initialToolCallFacts, NONE, type ToolCallFacts } from '@demiurge/lifecycle';
import { RunsCollections } from './runs.collections.js';
import { type ToolCallView, turnToolCallKey } from './tool-call.view.js';

const domainTypes = toolCallEvents.map((e) => e.type);

/** The fold's facts of a stored call (the view keeps every fact the fold reads back). */
const factsOf = (view: ToolCallView): ToolCallFacts => ({ ...initialToolCallFacts, ...view });

/**
 * The view of the call after the fold (`evolveToolCall` in `@demiurge/lifecycle`, the same fold the turn engine
 * keeps its calls with): its facts, then the view's times.
 */
function viewOf(
  facts: ToolCallFacts,
  before: ToolCallView | undefined,
  event: RecordedEvent,
): ToolCallView | undefined {
  const { status, toolCallId, sessionId, turnId, stepId, tool, idempotent } = facts;
  if (status === NONE || toolCallId === null || sessionId === null || turnId === null || stepId === null) return;
  if (tool === null || idempotent === null) return;
  return {
    toolCallId,
    sessionId,
    turnId,
    runId: facts.runId,
    stepId,
    tool,
    effect: facts.effect,
    idempotent,
    arguments: facts.arguments,
    status,
    output: facts.output,
    error: facts.error,
    denial: facts.denial,
    reason: facts.reason,
    resolution: facts.resolution,
    requestedAt: before?.requestedAt ?? event.recordedAt,
    updatedAt: event.recordedAt,
  };
}

/**
 * Applies a `tool_call.*` event: the tool-call fold (`evolveToolCall`: the status from the tool-call machine,
 * whose guard picks the target of `tool_call.resolved`), then the view's times. The `tool-calls-by-turn` entry
 * is written once, at the request (its turn, step and id never change). An event the machine refuses, or one
 * for a call never requested, changes nothing.
 */
export function applyToolCallEvent(event: RecordedEvent, tx: ProjectionTx): void {
  if (!isEvent(event, ...domainTypes)) return;
  const { toolCallId } = event.data;
  const call = tx.get<ToolCallView>(RunsCollections.toolCalls, toolCallId);
  const facts = evolveToolCall(call ? factsOf(call) : initialToolCallFacts, asDomainEvent(event));
  const next = facts && viewOf(facts, call, event);
  if (!next) return;
  if (!call) tx.put(RunsCollections.toolCallsByTurn, turnToolCallKey(next.turnId, next.stepId, toolCallId), toolCallId);
  tx.put(RunsCollections.toolCalls, toolCallId, next);
}
