import { asDomainEvent, type EventOfType, isEvent, type RecordedEvent, toolCallEvents } from '@demiurge/contracts';
import type { ProjectionTx } from '@demiurge/event-store';
import { NONE, nextState, type ToolCallEventType, type ToolCallState, toolCallLifecycle } from '@demiurge/lifecycle';
import { RunsCollections } from './runs.collections.js';
import { type ToolCallStatus, type ToolCallView, turnToolCallKey } from './tool-call.view.js';

const domainTypes = toolCallEvents.map((e) => e.type);

function created(event: EventOfType<'tool_call.requested'>, status: ToolCallStatus): ToolCallView {
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
    status,
    output: null,
    error: null,
    denial: null,
    reason: null,
    resolution: null,
    requestedAt: event.recordedAt,
    updatedAt: event.recordedAt,
  };
}

/** The fields one accepted event sets. */
function changes(recorded: RecordedEvent): Partial<ToolCallView> {
  const event = asDomainEvent(recorded);
  switch (event.type) {
    case 'tool_call.denied': {
      const d = event.data;
      return { denial: { policy: d.policy, reason: d.reason } };
    }
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
 * Applies a `tool_call.*` event: the status from the tool-call machine (`nextState`, whose guard picks the
 * target of `tool_call.resolved`), then the view's fields. The `tool-calls-by-turn` entry is written once, at
 * the request (its turn, step and id never change). An event the machine refuses, or one for a call never
 * requested, changes nothing.
 */
export function applyToolCallEvent(event: RecordedEvent, tx: ProjectionTx): void {
  if (!isEvent(event, ...domainTypes)) return;
  const { toolCallId } = event.data;
  const call = tx.get<ToolCallView>(RunsCollections.toolCalls, toolCallId);
  const from: ToolCallState = call?.status ?? NONE;
  const to = nextState(toolCallLifecycle, from, { type: event.type as ToolCallEventType, data: event.data });
  if (to === undefined || to === NONE) return;
  if (call) {
    tx.put(RunsCollections.toolCalls, toolCallId, {
      ...call,
      ...changes(event),
      status: to,
      updatedAt: event.recordedAt,
    });
    return;
  }
  if (!isEvent(event, 'tool_call.requested')) return;
  const next = created(event, to);
  tx.put(RunsCollections.toolCallsByTurn, turnToolCallKey(next.turnId, next.stepId, toolCallId), toolCallId);
  tx.put(RunsCollections.toolCalls, toolCallId, next);
}
