import type {
  ApprovalConsumed,
  ApprovalDenied,
  ApprovalGranted,
  ApprovalRequested,
  EventData,
  RecordedEvent,
} from '@demiurge/contracts';
import type { ProjectionTx } from '@demiurge/event-store';
import { type ApprovalEventType, type ApprovalState, approvalLifecycle, NONE, nextState } from '@demiurge/lifecycle';
import {
  type ApprovalEntry,
  type ApprovalStatus,
  type ApprovalView,
  isApprovalOpen,
  sessionApprovalKey,
} from './approval.view.js';
import { isoTime } from './iso-time.js';
import { RunsCollections } from './runs.collections.js';

function created(event: RecordedEvent, status: ApprovalStatus): ApprovalView {
  const d = event.data as EventData<typeof ApprovalRequested>;
  return {
    approvalId: d.approvalId,
    sessionId: d.sessionId,
    runId: d.runId ?? null,
    toolCallId: d.toolCallId ?? null,
    tool: d.tool ?? null,
    arguments: d.arguments ?? null,
    action: d.action,
    reason: d.reason,
    status,
    expiresAt: d.expiresAt === undefined ? null : isoTime(d.expiresAt),
    requestedBy: event.meta.actor,
    decidedBy: null,
    note: null,
    consumedBy: null,
    createdAt: event.recordedAt,
    updatedAt: event.recordedAt,
  };
}

/** The fields one accepted event sets. */
function changes(event: RecordedEvent): Partial<ApprovalView> {
  switch (event.type) {
    case 'approval.granted':
    case 'approval.denied':
      return {
        decidedBy: event.meta.actor,
        note: (event.data as EventData<typeof ApprovalGranted | typeof ApprovalDenied>).note ?? null,
      };
    case 'approval.consumed':
      return { consumedBy: (event.data as EventData<typeof ApprovalConsumed>).toolCallId ?? null };
    default:
      return {};
  }
}

/** Rewrites the approval's `approvals-by-session` entry, and puts or removes its `open-approvals` one. */
function reindex(tx: ProjectionTx, before: ApprovalView | undefined, after: ApprovalView): void {
  if (before?.status === after.status) return;
  const { approvalId, status, tool, expiresAt } = after;
  const entry: ApprovalEntry = { approvalId, status, tool, expiresAt };
  tx.put(RunsCollections.approvalsBySession, sessionApprovalKey(after.sessionId, approvalId), entry);
  if (isApprovalOpen(status)) tx.put(RunsCollections.openApprovals, approvalId, entry);
  else if (before && isApprovalOpen(before.status)) tx.delete(RunsCollections.openApprovals, approvalId);
}

/**
 * Applies an `approval.*` event: the status from the approval machine (`nextState`), then the view's
 * fields and indexes. An event the machine refuses, or one for an approval never requested, changes nothing.
 */
export function applyApprovalEvent(event: RecordedEvent, tx: ProjectionTx): void {
  const { approvalId } = event.data as { approvalId: string };
  const approval = tx.get<ApprovalView>(RunsCollections.approvals, approvalId);
  const from: ApprovalState = approval?.status ?? NONE;
  const to = nextState(approvalLifecycle, from, { type: event.type as ApprovalEventType, data: event.data });
  if (to === undefined || to === NONE) return;
  const next = approval
    ? { ...approval, ...changes(event), status: to, updatedAt: event.recordedAt }
    : created(event, to);
  reindex(tx, approval, next);
  tx.put(RunsCollections.approvals, approvalId, next);
}
