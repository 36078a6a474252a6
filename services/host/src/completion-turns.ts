import type { EventStore } from '@demiurge/event-store';
import { runsReader } from '@demiurge/projector-runs';
import { taskBoardReader } from '@demiurge/projector-task-board';
import type { TurnRuntime } from '@demiurge/turn-engine';

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

/** How long a session whose completion turn could not be admitted waits before the next try. */
export const COMPLETION_RETRY_MS = 30_000;

export interface CompletionTurnsDeps {
  readonly store: EventStore;
  readonly runtime: Pick<TurnRuntime, 'engine' | 'host' | 'sessions' | 'work'>;
  readonly clock: { now(): number };
  /** Takes a started completion turn (the host tracks it for close). */
  readonly track: (outcome: Promise<unknown>) => void;
  /** Says why a completion turn could not be admitted (once per try). */
  readonly report: (sessionId: string, err: Error) => void;
}

/** What one round did. */
export interface CompletionRound {
  /** Sessions a completion turn was started for. */
  readonly started: readonly string[];
  /** Sessions with pending notices that were busy: the notices join their next input. */
  readonly deferred: readonly string[];
  /** Notices settled without delivery: their task was deleted or archived (old logs), or their session archived. */
  readonly settled: number;
  /**
   * Sessions whose only pending notices are of tasks cancelled together with their own run (an operator's
   * interrupt or cancel): no turn is started for them; the notices join the session's next input.
   */
  readonly quiet: readonly string[];
}

/**
 * The completion loop (seed 003 completion notices, `notify_policy: return_to_parent`): every session with
 * pending task notices that is idle gets a completion turn whose input is those notices, acknowledged in
 * the commit that admits the turn. A busy session (a turn running or waiting for admission here, or any
 * live run of it in the log, e.g. waiting for an approval) is left alone: its next input takes the notices
 * as context in its own admission (queue, not interrupt), or this loop does once it is idle. A turn that
 * cannot be admitted (a failing input slot...) is retried after {@link COMPLETION_RETRY_MS}, not every round.
 *
 * A task cancelled together with the run that started it (the operator interrupted or cancelled that run)
 * starts no completion turn: a new model turn right after an interrupt would undo it. Such notices wait for
 * the session's next input, which carries them as context (a turn started for another notice takes them too).
 */
export class CompletionTurns {
  private readonly retryAt = new Map<string, number>();

  constructor(private readonly deps: CompletionTurnsDeps) {}

  async round(): Promise<CompletionRound> {
    const { engine, host, sessions, work } = this.deps.runtime;
    let settled = await host.settleOrphanedCompletions();
    const pending = (await host.pendingTaskCompletions()).filter((n) => !n.orphaned);
    const bySession = new Map<string, string[]>();
    const wakes = new Set<string>();
    for (const n of pending) {
      bySession.set(n.sessionId, [...(bySession.get(n.sessionId) ?? []), n.workId]);
      if (!(n.outcome === 'cancelled' && (await this.cancelledWithItsRun(n.taskId)))) wakes.add(n.sessionId);
    }
    if (bySession.size === 0) return { started: [], deferred: [], settled, quiet: [] };
    const live = await runsReader(this.deps.store).live();
    const withLiveRun = new Set(live.map((r) => r.sessionId));
    const started: string[] = [];
    const deferred: string[] = [];
    const quiet: string[] = [];
    const now = this.deps.clock.now();
    for (const [sessionId, workIds] of bySession) {
      if ((this.retryAt.get(sessionId) ?? 0) > now) continue;
      if ((await sessions.get(sessionId).catch(() => undefined))?.status === 'archived') {
        // An archived session takes no turns: nobody can be told, so the notices are settled.
        for (const workId of workIds) await work.cancel(workId, 'its session is archived');
        settled += workIds.length;
        continue;
      }
      if (!wakes.has(sessionId)) {
        quiet.push(sessionId);
        continue;
      }
      if (engine.isBusy(sessionId) || withLiveRun.has(sessionId)) {
        deferred.push(sessionId);
        continue;
      }
      // runNoticeTurn marks the session busy at once, so the next round never starts a second turn for it.
      const outcome = engine.runNoticeTurn({ sessionId }).catch((err: Error) => {
        this.retryAt.set(sessionId, this.deps.clock.now() + COMPLETION_RETRY_MS);
        this.deps.report(sessionId, err);
      });
      this.deps.track(outcome);
      started.push(sessionId);
    }
    return { started, deferred, settled, quiet };
  }

  /** Whether the task was cancelled as part of cancelling the run that started it. */
  private async cancelledWithItsRun(taskId: string): Promise<boolean> {
    const task = await taskBoardReader(this.deps.store).get(taskId);
    if (!task?.runId || task.status !== 'cancelled') return false;
    const run = await runsReader(this.deps.store).get(task.runId);
    return run?.status === 'cancelled' || run?.status === 'cancelling';
  }
}
