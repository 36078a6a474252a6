import type { NewEvent, RecordedEvent } from '@demiurge/contracts';
import {
  type ApprovalEventType,
  type ApprovalFacts,
  approvalFold,
  approvalLifecycle,
  checkEvents,
} from '@demiurge/lifecycle';
import { normalizeArguments } from './policy.js';

/** What an approval is asked for: one tool call shape (session, tool, arguments), until `expiresAt`. */
export interface ApprovalRequestSpec {
  readonly sessionId: string;
  readonly runId?: string;
  readonly toolCallId?: string;
  readonly tool: string;
  readonly arguments: unknown;
  readonly reason: string;
  readonly expiresAt?: string;
}

/** A command to an approval. `request` with `grant` is an operator's approval ahead of the call. */
export type ApprovalCommand =
  | {
      readonly type: 'request';
      readonly approvalId: string;
      readonly spec: ApprovalRequestSpec;
      readonly grant?: { readonly note?: string | undefined };
    }
  | { readonly type: 'grant'; readonly approvalId: string; readonly note?: string | undefined }
  | { readonly type: 'deny'; readonly approvalId: string; readonly note?: string | undefined }
  | { readonly type: 'expire'; readonly approvalId: string }
  | { readonly type: 'consume'; readonly approvalId: string; readonly toolCallId: string };

type ApprovalEvent = NewEvent<ApprovalEventType>;

function requested(approvalId: string, spec: ApprovalRequestSpec): ApprovalEvent {
  return {
    type: 'approval.requested',
    data: {
      approvalId,
      sessionId: spec.sessionId,
      action: `tool ${spec.tool}`,
      reason: spec.reason,
      tool: spec.tool,
      arguments: JSON.parse(normalizeArguments(spec.arguments ?? {})),
      ...(spec.toolCallId ? { toolCallId: spec.toolCallId } : {}),
      ...(spec.runId ? { runId: spec.runId } : {}),
      ...(spec.expiresAt ? { expiresAt: spec.expiresAt } : {}),
    },
  };
}

const noted = (note: string | undefined) => (note ? { note } : {});

function wanted(command: ApprovalCommand, approval: ApprovalFacts): ApprovalEvent[] {
  const { approvalId } = command;
  switch (command.type) {
    case 'request':
      return [
        requested(approvalId, command.spec),
        ...(command.grant
          ? [{ type: 'approval.granted' as const, data: { approvalId, ...noted(command.grant.note) } }]
          : []),
      ];
    case 'grant':
      return [{ type: 'approval.granted', data: { approvalId, ...noted(command.note) } }];
    case 'deny':
      return [{ type: 'approval.denied', data: { approvalId, ...noted(command.note) } }];
    case 'expire':
      // Only an open approval expires; expiring an answered or used one is nothing to do.
      return approval.status === 'requested' || approval.status === 'granted'
        ? [{ type: 'approval.expired', data: { approvalId } }]
        : [];
    case 'consume':
      return [{ type: 'approval.consumed', data: { approvalId, toolCallId: command.toolCallId } }];
  }
}

/**
 * The approval's decisions (pure): the events a command appends in `approval`, checked by the approval machine.
 * Expiring an approval that is no longer open appends nothing; anything else the machine refuses (granting a
 * denied approval, consuming one twice) throws `IllegalTransitionError`.
 * @example
 * decideApproval({ type: 'grant', approvalId }, approval); // [approval.granted]
 */
export function decideApproval(command: ApprovalCommand, approval: ApprovalFacts): ApprovalEvent[] {
  return checkEvents(approvalLifecycle, approval.status, wanted(command, approval), command.approvalId);
}

/** The approval decider: {@link decideApproval} over the one approval fold (`approvalFold` in `@demiurge/lifecycle`). */
export const approvalDecider = {
  initialState: approvalFold.initialState,
  decide: decideApproval,
  evolve: (approval: ApprovalFacts, event: RecordedEvent) => approvalFold.evolve(approval, event, event.streamId),
};
