import type {
  EventData,
  RecordedEvent,
  RunBlocked,
  RunCancelled,
  RunCheckpointed,
  RunFailed,
  RunOwnerClaimed,
  RunOwnerHeartbeat,
  RunOwnerLeaseExpired,
  RunQueued,
  RunStarted,
} from '@demiurge/contracts';
import type { ProjectionTx } from '@demiurge/event-store';
import { NONE, nextState, type RunEventType, type RunState, runLifecycle } from '@demiurge/lifecycle';
import { isoTime } from './iso-time.js';
import {
  isRunFinal,
  type LiveRunEntry,
  type RunStatus,
  type RunView,
  type SessionRunEntry,
  sessionRunKey,
} from './run.view.js';
import { RunsCollections } from './runs.collections.js';

function created(event: RecordedEvent, status: RunStatus): RunView {
  const d = event.data as EventData<typeof RunQueued>;
  return {
    runId: d.runId,
    sessionId: d.sessionId,
    status,
    owner: null,
    leaseToken: null,
    leaseUntil: null,
    stage: null,
    lastCheckpointId: null,
    turnIds: [],
    currentTurnId: null,
    reason: null,
    resumable: null,
    error: null,
    createdAt: event.recordedAt,
    updatedAt: event.recordedAt,
    endedAt: null,
  };
}

/** The fields one accepted event sets, before the per-status rules in {@link evolve}. */
function changes(run: RunView, event: RecordedEvent): Partial<RunView> {
  switch (event.type) {
    case 'run.started': {
      const { owner } = event.data as EventData<typeof RunStarted>;
      // A lease held by someone else is not this owner's.
      return owner === run.owner ? { owner } : { owner, leaseToken: null, leaseUntil: null };
    }
    case 'run.owner_claimed': {
      const d = event.data as EventData<typeof RunOwnerClaimed>;
      return { owner: d.owner, leaseToken: d.leaseToken, leaseUntil: isoTime(d.leaseUntil) };
    }
    case 'run.owner_heartbeat': {
      const d = event.data as EventData<typeof RunOwnerHeartbeat>;
      return d.leaseToken === run.leaseToken ? { owner: d.owner, leaseUntil: isoTime(d.leaseUntil) } : {};
    }
    case 'run.owner_lease_expired': {
      const d = event.data as EventData<typeof RunOwnerLeaseExpired>;
      return d.leaseToken === run.leaseToken ? { owner: null, leaseToken: null, leaseUntil: null } : {};
    }
    case 'run.checkpointed': {
      const d = event.data as EventData<typeof RunCheckpointed>;
      return { stage: d.stage, lastCheckpointId: d.checkpointId };
    }
    case 'run.waiting':
    case 'run.paused':
    case 'run.cancel_requested':
      return { reason: (event.data as { reason: string }).reason };
    case 'run.blocked': {
      const d = event.data as EventData<typeof RunBlocked>;
      return { reason: d.reason, resumable: d.resumable };
    }
    case 'run.cancelled': {
      const d = event.data as EventData<typeof RunCancelled>;
      return { reason: d.reason, resumable: d.resumable };
    }
    case 'run.resumed':
      return { reason: null };
    case 'run.failed':
      return { error: (event.data as EventData<typeof RunFailed>).error };
    default:
      return {};
  }
}

/**
 * The run after an event the machine accepted: the event's own fields, then the status rules: `resumable`
 * only while blocked or once cancelled, no lease once final, `endedAt` set on entering a final status.
 */
function evolve(run: RunView, event: RecordedEvent, status: RunStatus): RunView {
  const next: RunView = { ...run, ...changes(run, event), status, updatedAt: event.recordedAt };
  const final = isRunFinal(status);
  const keepsResumable = status === 'blocked' || status === 'cancelled' || status === 'archived';
  return {
    ...next,
    resumable: keepsResumable ? next.resumable : null,
    leaseToken: final ? null : next.leaseToken,
    leaseUntil: final ? null : next.leaseUntil,
    endedAt: next.endedAt ?? (final ? event.recordedAt : null),
  };
}

const liveEntry = (run: RunView): LiveRunEntry | undefined =>
  isRunFinal(run.status)
    ? undefined
    : { runId: run.runId, sessionId: run.sessionId, status: run.status, owner: run.owner, leaseUntil: run.leaseUntil };

/** Rewrites the run's `runs-by-session` entry when its status changed, and its `live-runs` entry when that changed. */
function reindex(tx: ProjectionTx, before: RunView | undefined, after: RunView): void {
  if (before?.status !== after.status) {
    const entry: SessionRunEntry = { runId: after.runId, status: after.status };
    tx.put(RunsCollections.runsBySession, sessionRunKey(after.sessionId, after.runId), entry);
  }
  const old = before && liveEntry(before);
  const now = liveEntry(after);
  if (old && !now) tx.delete(RunsCollections.liveRuns, after.runId);
  if (now && JSON.stringify(old) !== JSON.stringify(now)) tx.put(RunsCollections.liveRuns, after.runId, now);
}

/**
 * Applies a `run.*` event: the status from the run machine (`nextState`), then the view's fields and
 * indexes. An event the machine refuses, or one for a run never queued, changes nothing.
 */
export function applyRunEvent(event: RecordedEvent, tx: ProjectionTx): void {
  const { runId } = event.data as { runId: string };
  const run = tx.get<RunView>(RunsCollections.runs, runId);
  const from: RunState = run?.status ?? NONE;
  const to = nextState(runLifecycle, from, { type: event.type as RunEventType, data: event.data });
  if (to === undefined || to === NONE) return;
  const next = run ? evolve(run, event, to) : created(event, to);
  reindex(tx, run, next);
  tx.put(RunsCollections.runs, runId, next);
}
