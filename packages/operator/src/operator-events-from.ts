import { asDomainEvent, type EventOfType, type RecordedEvent } from '@demiurge/contracts';
import type { OperatorEvent, OperatorEventPayload } from './operator-events.js';

/**
 * The work item's status after each work event. `work.failed` and `work.resolved` depend on their data;
 * `work.lease_expired` depends on the state before it (claimed/running work is rescheduled, sending work
 * becomes unknown), so it reports `lease_expired`. `work.heartbeat` changes no status and is not projected.
 */
const workStatus: Readonly<Record<string, string>> = {
  'work.enqueued': 'queued',
  'work.claimed': 'claimed',
  'work.running': 'running',
  'work.sending': 'sending',
  'work.succeeded': 'succeeded',
  'work.cancelled': 'cancelled',
  'work.unknown': 'unknown',
  'work.lease_expired': 'lease_expired',
  'work.acknowledged': 'acknowledged',
  'work.corrupt': 'corrupt',
};
const resolvedStatus = { sent: 'succeeded', failed: 'failed', retry: 'retry_scheduled' } as const;

type Ending = EventOfType<
  'turn.completed' | 'turn.failed' | 'turn.cancelled' | 'run.completed' | 'run.failed' | 'run.cancelled'
>;
type WorkEvent = EventOfType<
  | 'work.enqueued'
  | 'work.claimed'
  | 'work.running'
  | 'work.sending'
  | 'work.heartbeat'
  | 'work.succeeded'
  | 'work.failed'
  | 'work.cancelled'
  | 'work.unknown'
  | 'work.lease_expired'
  | 'work.acknowledged'
  | 'work.resolved'
  | 'work.corrupt'
>;

/**
 * Projects one recorded store event to the operator events it means, or `[]`. Pure and per event:
 *
 * | store event | operator event |
 * | --- | --- |
 * | `message.recorded` (not `transient`) | `operator.message` |
 * | `work.*` (not `work.heartbeat`) | `operator.work.updated` with the item's new status |
 * | `approval.requested` | `operator.approval.opened` |
 * | `turn.completed` / `turn.failed` / `turn.cancelled` | `operator.status` (subject `turn`) |
 * | `run.completed` / `run.failed` / `run.cancelled` | `operator.status` (subject `run`) |
 *
 * Anything else (including `delivery.*`: the host pushes `operator.deliver` for the operator channel) is `[]`.
 *
 * @example
 * const events$ = store.events$.pipe(mergeMap((event) => operatorEventsFrom(event))); // rxjs
 */
export function operatorEventsFrom(recorded: RecordedEvent): OperatorEvent[] {
  // The store validated the data on read: the type narrows it (the one cast is `asDomainEvent`, in contracts).
  const event = asDomainEvent(recorded);
  switch (event.type) {
    case 'message.recorded': {
      const d = event.data;
      if (d.visibility === 'transient') return [];
      const payload: OperatorEventPayload<'operator.message'> = {
        message_id: d.messageId,
        session_id: d.sessionId,
        ...(d.turnId === undefined ? {} : { turn_id: d.turnId }),
        role: d.role,
        text: d.text,
        visibility: d.visibility,
      };
      return [{ event: 'operator.message', payload }];
    }
    case 'approval.requested': {
      const d = event.data;
      const payload: OperatorEventPayload<'operator.approval.opened'> = {
        approval_id: d.approvalId,
        session_id: d.sessionId,
        action: d.action,
        reason: d.reason,
        ...(d.tool === undefined ? {} : { tool: d.tool }),
        ...(d.toolCallId === undefined ? {} : { tool_call_id: d.toolCallId }),
        ...(d.runId === undefined ? {} : { run_id: d.runId }),
        ...(d.arguments === undefined ? {} : { arguments: d.arguments }),
        ...(d.expiresAt === undefined ? {} : { expires_at: d.expiresAt }),
      };
      return [{ event: 'operator.approval.opened', payload }];
    }
    case 'turn.completed':
    case 'turn.failed':
    case 'turn.cancelled':
      return [status(event, { subject: 'turn', session_id: event.data.sessionId, turn_id: event.data.turnId })];
    case 'run.completed':
    case 'run.failed':
    case 'run.cancelled': {
      const session = event.meta.sessionId === undefined ? {} : { session_id: event.meta.sessionId };
      return [status(event, { subject: 'run', run_id: event.data.runId, ...session })];
    }
    case 'work.enqueued':
    case 'work.claimed':
    case 'work.running':
    case 'work.sending':
    case 'work.heartbeat':
    case 'work.succeeded':
    case 'work.failed':
    case 'work.cancelled':
    case 'work.unknown':
    case 'work.lease_expired':
    case 'work.acknowledged':
    case 'work.resolved':
    case 'work.corrupt':
      return workUpdated(event);
    default:
      return [];
  }
}

/** `operator.status` for a terminal turn or run event: the state is the type's verb, plus its reason or error. */
function status(
  event: Ending,
  ids: Pick<OperatorEventPayload<'operator.status'>, 'subject' | 'session_id' | 'run_id' | 'turn_id'>,
): OperatorEvent {
  const data: { reason?: string | undefined; error?: { code: string; message: string } | undefined } = {
    ...('reason' in event.data ? { reason: event.data.reason } : {}),
    ...('error' in event.data ? { error: event.data.error } : {}),
  };
  const state = event.type.slice(event.type.indexOf('.') + 1);
  return {
    event: 'operator.status',
    payload: {
      ...ids,
      state,
      ...(data.reason === undefined ? {} : { reason: data.reason }),
      ...(data.error === undefined ? {} : { error: data.error }),
    },
  };
}

function workUpdated(event: WorkEvent): OperatorEvent[] {
  const base = { work_id: event.data.workId, type: event.type };
  switch (event.type) {
    case 'work.enqueued':
      return [update({ ...base, status: 'queued', kind: event.data.kind })];
    case 'work.failed': {
      const d = event.data;
      return [update({ ...base, status: d.retryAt === undefined ? 'failed' : 'retry_scheduled', error: d.error })];
    }
    case 'work.resolved':
      return [update({ ...base, status: resolvedStatus[event.data.decision] })];
    case 'work.cancelled':
    case 'work.unknown':
      return [update({ ...base, status: workStatus[event.type] ?? event.type, reason: event.data.reason })];
    case 'work.corrupt':
      return [update({ ...base, status: workStatus[event.type] ?? event.type, reason: event.data.detail })];
    default: {
      const s = workStatus[event.type];
      return s === undefined ? [] : [update({ ...base, status: s })];
    }
  }
}

function update(payload: OperatorEventPayload<'operator.work.updated'>): OperatorEvent {
  return { event: 'operator.work.updated', payload };
}
