import { approvalEvents, asDomainEvent, type EventOfType, isEvent, type RecordedEvent } from '@demiurge/contracts';
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

const domainTypes = approvalEvents.map((e) => e.type);

function created(event: EventOfType<'approval.requested'>, status: ApprovalStatus): ApprovalView {
  const d = event.data;
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
function changes(recorded: RecordedEvent): Partial<ApprovalView> {
  const event = asDomainEvent(recorded);
  switch (event.type) {
    case 'approval.granted':
    case 'approval.denied':
      return {
        decidedBy: event.meta.actor,
        note: event.data.note ?? null,
      };
    case 'approval.consumed':
      return { consumedBy: event.data.toolCallId ?? null };
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
  if (!isEvent(event, ...domainTypes)) return;
  const { approvalId } = event.data;
  const approval = tx.get<ApprovalView>(RunsCollections.approvals, approvalId);
  const from: ApprovalState = approval?.status ?? NONE;
  const to = nextState(approvalLifecycle, from, { type: event.type as ApprovalEventType, data: event.data });
  if (to === undefined || to === NONE) return;
  const next = approval
    ? { ...approval, ...changes(event), status: to, updatedAt: event.recordedAt }
    : isEvent(event, 'approval.requested')
      ? created(event, to)
      : undefined;
  if (!next) return;
  reindex(tx, approval, next);
  tx.put(RunsCollections.approvals, approvalId, next);
}
