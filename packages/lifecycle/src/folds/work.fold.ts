import { asDomainEvent, type DomainEventData, type RecordedEvent } from '@demiurge/contracts';
import { NONE } from '../define-lifecycle.js';
import { type WorkEventType, type WorkState, workLifecycle } from '../machines/work.machine.js';
import { nextState } from '../transitions.js';

/** A work item's payload as `work.enqueued` carries it (JSON). */
export type WorkPayload = Exclude<DomainEventData<'work.enqueued'>['payload'], undefined>;

/**
 * A work item as its stream says: the work machine's state plus the facts a claim is checked against and
 * the read model is built from. The one fold of a work item, used by the command side
 * (`@demiurge/control-plane`'s `loadWork`) and the work-items projector alike, so they cannot disagree.
 * Times are `Date#toISOString()` strings, so they compare (and sort) as strings.
 */
export interface WorkFacts {
  readonly status: WorkState;
  readonly workId: string | null;
  readonly kind: string | null;
  readonly subjectId: string | null;
  readonly payload: WorkPayload | null;
  /** How many times it was claimed: the current (or last) claim's attempt number. */
  readonly attempts: number;
  /** The fencing token of the current claim; null unless claimed, running or sending. */
  readonly claimToken: string | null;
  /** The current claim's owner; same lifetime as `claimToken`. */
  readonly owner: string | null;
  /** When the current claim's lease ends (`work.claimed`, `work.heartbeat`); null unless leased. */
  readonly leaseUntil: string | null;
  /** `notBefore`, or the `retryAt` of a failure or a `retry` resolution; null unless queued or retry_scheduled. */
  readonly nextAttemptAt: string | null;
  /** When it may be claimed: `nextAttemptAt ?? enqueuedAt`. */
  readonly dueAt: string | null;
  /** The last `work.failed` error (a `work.corrupt` is `{ code: 'corrupt', message: detail }`); kept after success. */
  readonly lastError: { readonly code: string; readonly message: string } | null;
  /** `work.succeeded.externalRef`: the effect outside (a message id...). */
  readonly externalRef: string | null;
  /** When `work.enqueued` was recorded. */
  readonly enqueuedAt: string | null;
}

/** A work item before its first event. */
export const initialWorkFacts: WorkFacts = {
  status: NONE as WorkState,
  workId: null,
  kind: null,
  subjectId: null,
  payload: null,
  attempts: 0,
  claimToken: null,
  owner: null,
  leaseUntil: null,
  nextAttemptAt: null,
  dueAt: null,
  lastError: null,
  externalRef: null,
  enqueuedAt: null,
};

/** The states in which an item waits for a claim. */
export const CLAIMABLE_WORK_STATES: readonly WorkState[] = ['queued', 'retry_scheduled'];
/** The states in which an item is held by a claim (a claim token, an owner, a lease). */
export const LEASED_WORK_STATES: readonly WorkState[] = ['claimed', 'running', 'sending'];

let lastTimeIn: string | undefined;
let lastTimeOut = '';

/** A time in its one form (`toISOString`), remembered for the last one asked: a claim's lease is folded two or three times. */
function isoTime(time: string): string {
  if (time !== lastTimeIn) {
    lastTimeOut = new Date(time).toISOString();
    lastTimeIn = time;
  }
  return lastTimeOut;
}

/**
 * The claim token an event presents, if it presents one: every write of a claimant names its claim
 * (an acknowledgement may).
 */
function presentedToken(recorded: RecordedEvent): string | undefined {
  const event = asDomainEvent(recorded);
  switch (event.type) {
    case 'work.running':
    case 'work.sending':
    case 'work.heartbeat':
    case 'work.succeeded':
    case 'work.failed':
    case 'work.unknown':
    case 'work.lease_expired':
    case 'work.acknowledged':
      return event.data.claimToken;
    default:
      return undefined;
  }
}

/**
 * Whether the event is a write of a claim that no longer holds the item (a fencing token other than the
 * current claim's, while a claim holds it): such an event changes nothing.
 */
export function namesStaleClaim(work: WorkFacts, event: RecordedEvent): boolean {
  if (work.claimToken === null) return false;
  const token = presentedToken(event);
  return token !== undefined && token !== work.claimToken;
}

/** The fields one accepted event sets, before the per-state rules of {@link evolveTo}. */
function changes(work: WorkFacts, recorded: RecordedEvent, status: WorkState): Partial<WorkFacts> {
  const event = asDomainEvent(recorded);
  switch (event.type) {
    case 'work.enqueued': {
      const d = event.data;
      return {
        workId: d.workId,
        kind: d.kind,
        subjectId: d.subjectId,
        payload: d.payload ?? null,
        nextAttemptAt: d.notBefore === undefined ? null : isoTime(d.notBefore),
        enqueuedAt: event.recordedAt,
      };
    }
    case 'work.claimed': {
      const d = event.data;
      return {
        attempts: work.attempts + 1,
        claimToken: d.claimToken,
        owner: d.owner,
        leaseUntil: isoTime(d.leaseUntil),
      };
    }
    case 'work.heartbeat':
      return { leaseUntil: isoTime(event.data.leaseUntil) };
    case 'work.succeeded':
      return { externalRef: event.data.externalRef ?? null };
    case 'work.failed': {
      const d = event.data;
      const retryAt = status === 'retry_scheduled' && d.retryAt !== undefined ? isoTime(d.retryAt) : null;
      return { lastError: d.error, nextAttemptAt: retryAt };
    }
    case 'work.resolved': {
      const d = event.data;
      return { nextAttemptAt: status === 'retry_scheduled' && d.retryAt !== undefined ? isoTime(d.retryAt) : null };
    }
    case 'work.corrupt':
      return { lastError: { code: 'corrupt', message: event.data.detail } };
    default:
      return {};
  }
}

/**
 * The item after an event the machine took to `status`: the event's fields, then the state rules: a claim
 * (token, owner, lease) lives only while claimed/running/sending, a next attempt only while waiting for a
 * claim (a claim starts the attempt it scheduled), and it is due at its next attempt or else when enqueued.
 */
function evolveTo(work: WorkFacts, event: RecordedEvent, status: WorkState): WorkFacts {
  const next: WorkFacts = { ...work, ...changes(work, event, status), status };
  const leased = LEASED_WORK_STATES.includes(status);
  const nextAttemptAt = CLAIMABLE_WORK_STATES.includes(status) ? next.nextAttemptAt : null;
  return {
    ...next,
    claimToken: leased ? next.claimToken : null,
    owner: leased ? next.owner : null,
    leaseUntil: leased ? next.leaseUntil : null,
    nextAttemptAt,
    dueAt: nextAttemptAt ?? next.enqueuedAt,
  };
}

/**
 * The work item fold, strict: an event the work machine refuses throws `IllegalTransitionError` naming
 * the item; an event naming a stale claim token ({@link namesStaleClaim}) changes nothing.
 * @example
 * const item = await loadAggregate(store, workFold, workId); // item.state.status === 'claimed'
 */
export const workFold = {
  streamType: workLifecycle.streamType,
  initialState: initialWorkFacts,
  evolve(work: WorkFacts, event: RecordedEvent, streamId?: string): WorkFacts {
    if (namesStaleClaim(work, event)) return work;
    return evolveTo(work, event, workLifecycle.evolve(work.status, event, streamId));
  },
};

/**
 * The work item fold, tolerant: `undefined` for an event the machine refuses or one naming a stale claim
 * token (a read model skips it).
 * @example
 * evolveWork(initialWorkFacts, enqueued)?.status; // 'queued'
 */
export function evolveWork(work: WorkFacts, event: RecordedEvent): WorkFacts | undefined {
  if (namesStaleClaim(work, event)) return undefined;
  const status = nextState(workLifecycle, work.status, { type: event.type as WorkEventType, data: event.data });
  return status === undefined ? undefined : evolveTo(work, event, status);
}
