import { type Actor, asDomainEvent, type RecordedEvent } from '@demiurge/contracts';
import { NONE } from '../define-lifecycle.js';
import { type RunEventType, type RunState, runLifecycle } from '../machines/run.machine.js';
import { nextState } from '../transitions.js';

/**
 * A run as its stream says: the run machine's state plus the facts ownership, resume and the read model
 * are built from. The one fold of a run, used by the command side (`@demiurge/sessions`) and the runs
 * projector alike, so they cannot disagree.
 */
export interface RunFacts {
  readonly status: RunState;
  readonly runId: string | null;
  readonly sessionId: string | null;
  /** Who started the run and owns it (run.started); null in logs written before principals were recorded. */
  readonly principal: Actor | null;
  readonly owner: string | null;
  /** The current owner lease's fencing token: a heartbeat or expiry naming another token changes nothing. */
  readonly leaseToken: string | null;
  /** ISO time (one form: `toISOString`), so times compare as strings. */
  readonly leaseUntil: string | null;
  readonly stage: string | null;
  readonly checkpointId: string | null;
  /** From run.blocked / run.cancelled; kept only while blocked, cancelled or archived. */
  readonly resumable: boolean | null;
  readonly reason: string | null;
  readonly error: { readonly code: string; readonly message: string } | null;
}

/** A run before its first event. */
export const initialRunFacts: RunFacts = {
  status: NONE as RunState,
  runId: null,
  sessionId: null,
  principal: null,
  owner: null,
  leaseToken: null,
  leaseUntil: null,
  stage: null,
  checkpointId: null,
  resumable: null,
  reason: null,
  error: null,
};

const isoTime = (time: string): string => new Date(time).toISOString();

/**
 * Whether the event is a heartbeat or an expiry naming a lease token that is not the run's current one (a lease
 * since expired or taken over): such an event changes nothing.
 */
export function namesStaleLease(run: RunFacts, recorded: RecordedEvent): boolean {
  const event = asDomainEvent(recorded);
  return (
    (event.type === 'run.owner_heartbeat' || event.type === 'run.owner_lease_expired') &&
    event.data.leaseToken !== run.leaseToken
  );
}

/** The fields one accepted event sets. */
function changes(run: RunFacts, recorded: RecordedEvent): Partial<RunFacts> {
  const event = asDomainEvent(recorded);
  switch (event.type) {
    case 'run.queued':
      return { runId: event.data.runId, sessionId: event.data.sessionId };
    case 'run.started': {
      const { owner, principal } = event.data;
      // A lease held by someone else is not this owner's.
      const lease = owner === run.owner ? {} : { leaseToken: null, leaseUntil: null };
      return { owner, principal: principal ?? null, ...lease };
    }
    case 'run.owner_claimed':
      return { owner: event.data.owner, leaseToken: event.data.leaseToken, leaseUntil: isoTime(event.data.leaseUntil) };
    case 'run.owner_heartbeat':
      // A stale token (a lease since expired or taken over) extends nothing.
      return namesStaleLease(run, recorded)
        ? {}
        : { owner: event.data.owner, leaseUntil: isoTime(event.data.leaseUntil) };
    case 'run.owner_lease_expired':
      return namesStaleLease(run, recorded) ? {} : { owner: null, leaseToken: null, leaseUntil: null };
    case 'run.checkpointed':
      return { stage: event.data.stage, checkpointId: event.data.checkpointId };
    case 'run.waiting':
    case 'run.paused':
    case 'run.cancel_requested':
      return { reason: event.data.reason };
    case 'run.blocked':
    case 'run.cancelled':
      return { reason: event.data.reason, resumable: event.data.resumable };
    case 'run.resumed':
      return { reason: null };
    case 'run.failed':
      return { error: event.data.error };
    default:
      return {};
  }
}

/** The run after an event the machine took to `status`: the event's fields, then `resumable` only where it means something. */
function evolveTo(run: RunFacts, event: RecordedEvent, status: RunState): RunFacts {
  const next: RunFacts = { ...run, ...changes(run, event), status };
  const keepsResumable = status === 'blocked' || status === 'cancelled' || status === 'archived';
  return keepsResumable ? next : { ...next, resumable: null };
}

/**
 * The run fold, strict: an event the run machine refuses throws `IllegalTransitionError` naming the run
 * (the command side loads with it: `loadAggregate(store, runFold, runId)`).
 * @example
 * const run = await loadAggregate(store, runFold, runId); // run.state.status === 'running'
 */
export const runFold = {
  streamType: runLifecycle.streamType,
  initialState: initialRunFacts,
  evolve(run: RunFacts, event: RecordedEvent, streamId?: string): RunFacts {
    return evolveTo(run, event, runLifecycle.evolve(run.status, event, streamId));
  },
};

/**
 * The run fold, tolerant: `undefined` for an event the machine refuses (a read model skips it).
 * @example
 * evolveRun(initialRunFacts, queued)?.status; // 'queued'
 */
export function evolveRun(run: RunFacts, event: RecordedEvent): RunFacts | undefined {
  const status = nextState(runLifecycle, run.status, { type: event.type as RunEventType, data: event.data });
  return status === undefined ? undefined : evolveTo(run, event, status);
}
