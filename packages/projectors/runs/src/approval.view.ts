import type { Actor } from '@demiurge/contracts';
import type { ApprovalState } from '@demiurge/lifecycle';
import { sessionPrefix } from './runs.collections.js';

/** An approval's status: any state of the approval machine except the pre-creation `none`. */
export type ApprovalStatus = Exclude<ApprovalState, 'none'>;

/** One request for a person to allow an action that policy blocked. Times are `Date#toISOString()` strings. */
export interface ApprovalView {
  readonly approvalId: string;
  readonly sessionId: string;
  readonly runId: string | null;
  /** The exact tool call the approval covers, if it is for one. */
  readonly toolCallId: string | null;
  readonly tool: string | null;
  /** The tool call's normalized arguments; null when the request carried none. */
  readonly arguments: unknown;
  readonly action: string;
  readonly reason: string;
  readonly status: ApprovalStatus;
  readonly expiresAt: string | null;
  /** The actor (`meta.actor`) of `approval.requested`. */
  readonly requestedBy: Actor;
  /** The actor of `approval.granted` or `approval.denied`. */
  readonly decidedBy: Actor | null;
  /** The note of `approval.granted` or `approval.denied`. */
  readonly note: string | null;
  /** `toolCallId` of `approval.consumed`: the call that used the grant. */
  readonly consumedBy: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** An entry of `approvals-by-session` (every approval) and `open-approvals` (requested or granted ones). */
export interface ApprovalEntry {
  readonly approvalId: string;
  readonly status: ApprovalStatus;
  readonly tool: string | null;
  readonly expiresAt: string | null;
}

/** The statuses of an approval that can still authorize something: waiting for an answer, or granted and unused. */
export const OPEN_APPROVAL_STATUSES: readonly ApprovalStatus[] = ['requested', 'granted'];

/**
 * Whether an approval in this status is open (in `open-approvals`).
 * @example
 * isApprovalOpen('granted'); // true: granted but not consumed yet
 * isApprovalOpen('consumed'); // false
 */
export const isApprovalOpen = (status: ApprovalStatus): boolean => OPEN_APPROVAL_STATUSES.includes(status);

/**
 * The `approvals-by-session` id: session then approval (approval ids are time-sortable).
 * @example
 * await reader.list<ApprovalEntry>(RunsCollections.approvalsBySession, { prefix: sessionPrefix(sessionId) });
 */
export const sessionApprovalKey = (sessionId: string, approvalId: string): string =>
  `${sessionPrefix(sessionId)}${approvalId}`;
