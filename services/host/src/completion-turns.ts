import type { EventStore } from '@demiurge/event-store';
import { type LiveRunEntry, RunsCollections, runsProjector } from '@demiurge/projector-runs';
import type { TurnOutcome, TurnRuntime } from '@demiurge/turn-engine';

/** The events that wake the completion loop: a notice is ready, or a session may have become idle. */
export const COMPLETION_WAKE_EVENTS = [
  'task.completion_ready',
  'turn.completed',
  'turn.failed',
  'turn.cancelled',
  'run.completed',
  'run.failed',
  'run.cancelled',
];

export interface CompletionTurnsDeps {
  readonly store: EventStore;
  readonly runtime: Pick<TurnRuntime, 'engine' | 'host'>;
  /** Takes a started completion turn (the host tracks it for close and logs its failure). */
  readonly started: (sessionId: string, outcome: Promise<TurnOutcome | undefined>) => void;
}

/** What one round did. */
export interface CompletionRound {
  /** Sessions a completion turn was started for. */
  readonly started: readonly string[];
  /** Sessions with pending notices that were busy: the notices join their next input. */
  readonly deferred: readonly string[];
  /** Notices of deleted or archived tasks settled (old logs). */
  readonly settled: number;
}

/**
 * One round of the completion loop (seed 003 completion notices, `notify_policy: return_to_parent`): every
 * session with pending task notices that is idle gets a completion turn whose input is those notices,
 * acknowledged in the commit that admits the turn. A busy session (a turn running or waiting for admission
 * here, or any live run of it in the log, e.g. waiting for an approval) is left alone: its next input takes
 * the notices as context in its own admission (queue, not interrupt), or this loop does once it is idle.
 */
export async function deliverCompletions(deps: CompletionTurnsDeps): Promise<CompletionRound> {
  const { engine, host } = deps.runtime;
  const settled = await host.settleOrphanedCompletions();
  const pending = (await host.pendingTaskCompletions()).filter((n) => !n.orphaned);
  const sessions = [...new Set(pending.map((n) => n.sessionId))];
  if (sessions.length === 0) return { started: [], deferred: [], settled };
  const live = await deps.store.projection(runsProjector.name).list<LiveRunEntry>(RunsCollections.liveRuns);
  const withLiveRun = new Set(live.map((r) => r.sessionId));
  const started: string[] = [];
  const deferred: string[] = [];
  for (const sessionId of sessions) {
    if (engine.isBusy(sessionId) || withLiveRun.has(sessionId)) {
      deferred.push(sessionId);
      continue;
    }
    // runNoticeTurn marks the session busy at once, so the next round never starts a second turn for it.
    deps.started(sessionId, engine.runNoticeTurn({ sessionId }));
    started.push(sessionId);
  }
  return { started, deferred, settled };
}
