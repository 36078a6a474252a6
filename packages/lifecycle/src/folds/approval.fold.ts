import { type Actor, asDomainEvent, type RecordedEvent } from '@demiurge/contracts';
import { NONE } from '../define-lifecycle.js';
import { type ApprovalEventType, type ApprovalState, approvalLifecycle } from '../machines/approval.machine.js';
import { nextState } from '../transitions.js';

/**
 * An approval as its stream says: the approval machine's state, what it covers (session, tool and normalized
 * arguments, the call), who asked and who answered, and the call that used it. The one fold of an approval,
 * used by the approvals runtime (`@demiurge/turn-engine`) and the runs projector alike.
 */
export interface ApprovalFacts {
  readonly status: ApprovalState;
  readonly approvalId: string | null;
  readonly sessionId: string | null;
  readonly runId: string | null;
  /** The exact tool call the approval covers, if it is for one. */
  readonly toolCallId: string | null;
  readonly tool: string | null;
  /** The tool call's normalized arguments; null when the request carried none. */
  readonly arguments: unknown;
  readonly action: string | null;
  readonly reason: string | null;
  /** ISO time (one form: `toISOString`), so times compare as strings. */
  readonly expiresAt: string | null;
  /** The actor (`meta.actor`) of `approval.requested`. */
  readonly requestedBy: Actor | null;
  /** The actor of `approval.granted` or `approval.denied`. */
  readonly decidedBy: Actor | null;
  /** The note of `approval.granted` or `approval.denied`. */
  readonly note: string | null;
  /** `toolCallId` of `approval.consumed`: the call that used the grant. */
  readonly consumedBy: string | null;
}

/** An approval before its first event. */
export const initialApprovalFacts: ApprovalFacts = {
  status: NONE as ApprovalState,
  approvalId: null,
  sessionId: null,
  runId: null,
  toolCallId: null,
  tool: null,
  arguments: null,
  action: null,
  reason: null,
  expiresAt: null,
  requestedBy: null,
  decidedBy: null,
  note: null,
  consumedBy: null,
};

const isoTime = (time: string): string => new Date(time).toISOString();

/** The fields one accepted event sets. */
function changes(recorded: RecordedEvent): Partial<ApprovalFacts> {
  const event = asDomainEvent(recorded);
  switch (event.type) {
    case 'approval.requested': {
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
        expiresAt: d.expiresAt === undefined ? null : isoTime(d.expiresAt),
        requestedBy: event.meta.actor,
      };
    }
    case 'approval.granted':
    case 'approval.denied':
      return { decidedBy: event.meta.actor, note: event.data.note ?? null };
    case 'approval.consumed':
      return { consumedBy: event.data.toolCallId ?? null };
    default:
      return {};
  }
}

/**
 * The approval fold, strict: an event the approval machine refuses throws `IllegalTransitionError` naming the
 * approval (the command side loads with it: `loadAggregate(store, approvalFold, approvalId)`).
 */
export const approvalFold = {
  streamType: approvalLifecycle.streamType,
  initialState: initialApprovalFacts,
  evolve(approval: ApprovalFacts, event: RecordedEvent, streamId?: string): ApprovalFacts {
    return { ...approval, ...changes(event), status: approvalLifecycle.evolve(approval.status, event, streamId) };
  },
};

/**
 * The approval fold, tolerant: `undefined` for an event the machine refuses (a read model skips it).
 * @example
 * evolveApproval(initialApprovalFacts, requested)?.status; // 'requested'
 */
export function evolveApproval(approval: ApprovalFacts, event: RecordedEvent): ApprovalFacts | undefined {
  const status = nextState(approvalLifecycle, approval.status, {
    type: event.type as ApprovalEventType,
    data: event.data,
  });
  return status === undefined ? undefined : { ...approval, ...changes(event), status };
}
