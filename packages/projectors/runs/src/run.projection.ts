import { isEvent, type RecordedEvent, runEvents } from '@demiurge/contracts';
import type { ProjectionTx } from '@demiurge/event-store';
import { evolveRun, initialRunFacts, type RunFacts } from '@demiurge/lifecycle';
import { isRunFinal, type LiveRunEntry, type RunView, type SessionRunEntry, sessionRunKey } from './run.view.js';
import { RunsCollections } from './runs.collections.js';

const runEventTypes = runEvents.map((e) => e.type);

/** The fold's facts of a stored run (the view keeps every fact the fold reads back). */
function factsOf(run: RunView): RunFacts {
  return {
    ...initialRunFacts,
    status: run.status,
    runId: run.runId,
    sessionId: run.sessionId,
    owner: run.owner,
    leaseToken: run.leaseToken,
    leaseUntil: run.leaseUntil,
    stage: run.stage,
    checkpointId: run.lastCheckpointId,
    resumable: run.resumable,
    reason: run.reason,
    error: run.error,
  };
}

/**
 * The view of the run after the fold (`evolveRun` in `@demiurge/lifecycle`, the same fold the command side
 * loads runs with): its facts, then the view's rules: no lease once final, `endedAt` set on entering a final
 * status, the turns and times kept.
 */
function viewOf(facts: RunFacts, before: RunView | undefined, event: RecordedEvent): RunView | undefined {
  const status = facts.status;
  if (status === 'none' || facts.runId === null || facts.sessionId === null) return undefined;
  const final = isRunFinal(status);
  return {
    runId: facts.runId,
    sessionId: facts.sessionId,
    status,
    owner: facts.owner,
    leaseToken: final ? null : facts.leaseToken,
    leaseUntil: final ? null : facts.leaseUntil,
    stage: facts.stage,
    lastCheckpointId: facts.checkpointId,
    turnIds: before?.turnIds ?? [],
    currentTurnId: before?.currentTurnId ?? null,
    reason: facts.reason,
    resumable: facts.resumable,
    error: facts.error,
    createdAt: before?.createdAt ?? event.recordedAt,
    updatedAt: event.recordedAt,
    endedAt: before?.endedAt ?? (final ? event.recordedAt : null),
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
 * Applies a `run.*` event: the run fold (`evolveRun`: the status from the run machine, a stale lease token
 * changes nothing), then the view's fields and indexes. An event the machine refuses, or one for a run never
 * queued, changes nothing.
 */
export function applyRunEvent(event: RecordedEvent, tx: ProjectionTx): void {
  if (!isEvent(event, ...runEventTypes)) return;
  const runId = event.data.runId;
  const run = tx.get<RunView>(RunsCollections.runs, runId);
  const facts = evolveRun(run ? factsOf(run) : initialRunFacts, event);
  const next = facts && viewOf(facts, run, event);
  if (!next) return;
  reindex(tx, run, next);
  tx.put(RunsCollections.runs, runId, next);
}
