import type { EventStore } from '@demiurge/event-store';
import { isRunFinal, type RunView, runsReader } from '@demiurge/projector-runs';
import { type BoardEntry, type TaskStatus, taskBoardReader } from '@demiurge/projector-task-board';

/** The seed invariants `demiurge verify` checks on the read models. */
export const Invariant = {
  /** Cancelled (and otherwise ended) tasks leave the active lanes at once (seed 000). */
  endedTasksLeaveActiveLanes: 'ended-tasks-leave-active-lanes',
  /** A deleted task is hidden: in no lane, on no board, hidden in its session's list; kept for audit. */
  deletedTasksHidden: 'deleted-tasks-hidden',
  /**
   * A terminal run leaves no task that can no longer progress (seed 000): nothing blocked and not resumable,
   * and a cancelled run leaves nothing going (its cancel settles its tasks). Detached tasks of a completed or
   * failed run keep running by design and report through their completion notices.
   */
  terminalRunsLeaveNoActiveTasks: 'terminal-runs-leave-no-active-tasks',
  /**
   * Every live run has an owner whose lease is still valid; otherwise it waits for recovery. A paused run is
   * exempt: nothing executes it until an explicit resume (its owner may have closed meanwhile), and the
   * resume is what a serving host, or the next host start, acts on.
   */
  liveRunsHaveAnOwner: 'live-runs-have-a-valid-owner-lease',
  /** Every turn's pinned core revision was recorded and its snapshot is still in the home (see `checkPinnedRevisions`). */
  pinnedRevisionsExist: 'turns-pinned-revisions-exist',
} as const;
export type Invariant = (typeof Invariant)[keyof typeof Invariant];

/** One place where the read models break an invariant. */
export interface InvariantFinding {
  readonly invariant: Invariant;
  /** The task or run id. */
  readonly subject: string;
  readonly message: string;
}

const ACTIVE_LANES = new Set(['active', 'waiting', 'blocked']);
const GOING: readonly TaskStatus[] = ['created', 'active', 'waiting', 'blocked'];

/**
 * Checks the seed invariants on a store's live projections (task board, runs) as of `now` (for leases).
 * Reads only; each finding names the invariant, the task or run, and what is wrong.
 */
export async function checkInvariants(store: EventStore, now: number): Promise<InvariantFinding[]> {
  const findings: InvariantFinding[] = [];
  const board = taskBoardReader(store).collections;
  const runs = runsReader(store);
  const tasks = await board.tasks.list();
  const entries = await board.board.entries();
  const sessionEntries = await board.bySession.entries();
  const boardOf = new Map<string, { id: string; doc: BoardEntry }[]>();
  for (const e of entries) boardOf.set(e.doc.taskId, [...(boardOf.get(e.doc.taskId) ?? []), e]);
  const listedOf = new Map(sessionEntries.map((e) => [e.doc.taskId, e]));
  const runCache = new Map<string, RunView | undefined>();
  const runOf = async (runId: string) => {
    if (!runCache.has(runId)) runCache.set(runId, await runs.get(runId));
    return runCache.get(runId);
  };

  for (const task of tasks) {
    const found = (invariant: Invariant, message: string) =>
      findings.push({ invariant, subject: task.taskId, message: `task ${task.taskId} ${message}` });
    const onBoard = boardOf.get(task.taskId) ?? [];
    if (!GOING.includes(task.status)) {
      if (task.lane && ACTIVE_LANES.has(task.lane))
        found(Invariant.endedTasksLeaveActiveLanes, `is ${task.status} but its lane is ${task.lane}`);
      for (const e of onBoard.filter((b) => ACTIVE_LANES.has(b.doc.lane))) {
        found(
          Invariant.endedTasksLeaveActiveLanes,
          `is ${task.status} but is on the board in the ${e.doc.lane} lane (board/${e.id})`,
        );
      }
    }
    if (task.status === 'deleted') {
      const listed = listedOf.get(task.taskId);
      if (!task.hidden) found(Invariant.deletedTasksHidden, 'is deleted but not hidden');
      if (task.lane) found(Invariant.deletedTasksHidden, `is deleted but still in the ${task.lane} lane`);
      for (const e of onBoard) found(Invariant.deletedTasksHidden, `is deleted but still on the board (board/${e.id})`);
      if (listed && !listed.doc.hidden) {
        found(Invariant.deletedTasksHidden, `is deleted but its session lists it as visible (by-session/${listed.id})`);
      }
    }
    if (task.runId) {
      const run = await runOf(task.runId);
      const stuck =
        (task.status === 'blocked' && task.blocked?.resumable === false) ||
        (run?.status === 'cancelled' &&
          (task.status === 'created' || task.status === 'active' || task.status === 'waiting'));
      if (run && isRunFinal(run.status) && stuck) {
        const what = task.status === 'blocked' ? 'blocked and not resumable' : task.status;
        found(Invariant.terminalRunsLeaveNoActiveTasks, `is ${what} but its run ${run.runId} is ${run.status}`);
      }
    }
  }

  for (const live of await runs.live()) {
    const run = (await runOf(live.runId)) ?? live;
    if (run.status === 'paused') continue;
    const found = (message: string) =>
      findings.push({
        invariant: Invariant.liveRunsHaveAnOwner,
        subject: live.runId,
        message: `run ${live.runId} is ${run.status} ${message}`,
      });
    if (!run.owner) found('and has no owner (waiting for recovery)');
    else if (!run.leaseUntil) found(`and its owner ${run.owner} holds no lease`);
    else if (Date.parse(run.leaseUntil) <= now) {
      found(`but its owner ${run.owner}'s lease expired at ${run.leaseUntil} (a host must recover it)`);
    }
  }
  return findings;
}
