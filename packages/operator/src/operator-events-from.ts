import type {
  ApprovalRequested,
  EventData,
  MessageRecorded,
  RecordedEvent,
  RunCancelled,
  RunCompleted,
  RunFailed,
  TurnCancelled,
  TurnCompleted,
  TurnFailed,
  WorkEnqueued,
  WorkFailed,
  WorkResolved,
} from '@demiurge/contracts';
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

/** The data of a recorded event, typed by its definition (the store validated it on read). */
const dataOf = <D>(event: RecordedEvent): EventData<D> => event.data as EventData<D>;

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
export function operatorEventsFrom(event: RecordedEvent): OperatorEvent[] {
  switch (event.type) {
    case 'message.recorded': {
      const d = dataOf<typeof MessageRecorded>(event);
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
      const d = dataOf<typeof ApprovalRequested>(event);
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
    case 'turn.cancelled': {
      const d = dataOf<typeof TurnCompleted | typeof TurnFailed | typeof TurnCancelled>(event);
      return [status(event, { subject: 'turn', session_id: d.sessionId, turn_id: d.turnId })];
    }
    case 'run.completed':
    case 'run.failed':
    case 'run.cancelled': {
      const d = dataOf<typeof RunCompleted | typeof RunFailed | typeof RunCancelled>(event);
      const session = event.meta.sessionId === undefined ? {} : { session_id: event.meta.sessionId };
      return [status(event, { subject: 'run', run_id: d.runId, ...session })];
    }
    default:
      return event.type.startsWith('work.') ? workUpdated(event) : [];
  }
}

/** `operator.status` for a terminal turn or run event: the state is the type's verb, plus its reason or error. */
function status(
  event: RecordedEvent,
  ids: Pick<OperatorEventPayload<'operator.status'>, 'subject' | 'session_id' | 'run_id' | 'turn_id'>,
): OperatorEvent {
  const data = event.data as { reason?: string; error?: { code: string; message: string } };
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

function workUpdated(event: RecordedEvent): OperatorEvent[] {
  const workId = (event.data as { workId: string }).workId;
  const base = { work_id: workId, type: event.type };
  switch (event.type) {
    case 'work.enqueued':
      return [update({ ...base, status: 'queued', kind: dataOf<typeof WorkEnqueued>(event).kind })];
    case 'work.failed': {
      const d = dataOf<typeof WorkFailed>(event);
      return [update({ ...base, status: d.retryAt === undefined ? 'failed' : 'retry_scheduled', error: d.error })];
    }
    case 'work.resolved':
      return [update({ ...base, status: resolvedStatus[dataOf<typeof WorkResolved>(event).decision] })];
    case 'work.cancelled':
    case 'work.unknown':
    case 'work.corrupt': {
      const d = event.data as { reason?: string; detail?: string };
      return [update({ ...base, status: workStatus[event.type] ?? event.type, reason: d.reason ?? d.detail ?? '' })];
    }
    default: {
      const s = workStatus[event.type];
      return s === undefined ? [] : [update({ ...base, status: s })];
    }
  }
}

function update(payload: OperatorEventPayload<'operator.work.updated'>): OperatorEvent {
  return { event: 'operator.work.updated', payload };
}
