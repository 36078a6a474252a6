import { approvalEvents, isEvent, type RecordedEvent } from '@demiurge/contracts';
import type { ProjectionTx } from '@demiurge/event-store';
import { type ApprovalFacts, evolveApproval, initialApprovalFacts, NONE } from '@demiurge/lifecycle';
import { type ApprovalEntry, type ApprovalView, isApprovalOpen, sessionApprovalKey } from './approval.view.js';
import { RunsCollections } from './runs.collections.js';

const domainTypes = approvalEvents.map((e) => e.type);

/** The fold's facts of a stored approval (the view keeps every fact the fold reads back). */
const factsOf = (view: ApprovalView): ApprovalFacts => ({ ...initialApprovalFacts, ...view });

/**
 * The view of the approval after the fold (`evolveApproval` in `@demiurge/lifecycle`, the same fold the
 * approvals runtime decides on): its facts, then the view's times.
 */
function viewOf(
  facts: ApprovalFacts,
  before: ApprovalView | undefined,
  event: RecordedEvent,
): ApprovalView | undefined {
  const { status, approvalId, sessionId, action, reason, requestedBy } = facts;
  if (status === NONE || approvalId === null || sessionId === null || action === null || reason === null) return;
  if (requestedBy === null) return;
  return {
    approvalId,
    sessionId,
    runId: facts.runId,
    toolCallId: facts.toolCallId,
    tool: facts.tool,
    arguments: facts.arguments,
    action,
    reason,
    status,
    expiresAt: facts.expiresAt,
    requestedBy,
    decidedBy: facts.decidedBy,
    note: facts.note,
    consumedBy: facts.consumedBy,
    createdAt: before?.createdAt ?? event.recordedAt,
    updatedAt: event.recordedAt,
  };
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
 * Applies an `approval.*` event: the approval fold (`evolveApproval`: the status from the approval machine),
 * then the view's times and indexes. An event the machine refuses, or one for an approval never requested,
 * changes nothing.
 */
export function applyApprovalEvent(event: RecordedEvent, tx: ProjectionTx): void {
  if (!isEvent(event, ...domainTypes)) return;
  const { approvalId } = event.data;
  const approval = tx.get<ApprovalView>(RunsCollections.approvals, approvalId);
  const facts = evolveApproval(approval ? factsOf(approval) : initialApprovalFacts, event);
  const next = facts && viewOf(facts, approval, event);
  if (!next) return;
  reindex(tx, approval, next);
  tx.put(RunsCollections.approvals, approvalId, next);
}
