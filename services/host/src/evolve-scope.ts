import { coreStreamId } from '@demiurge/contracts';
import type { TaskRef } from '@demiurge/control-plane';
import { type EventStore, StreamVersionConflictError } from '@demiurge/event-store';
import { taskBoardReader } from '@demiurge/projector-task-board';
import type { EvolveClaim } from '@demiurge/slots';
import { ExclusiveScopeBusyError, isFinished, type TaskContext } from '@demiurge/workers';
import type { CoreSource } from './core-source.js';

/** The exclusive write scope an evolve of a core holds while it runs: two evolves of one core never overlap. */
export const evolveScope = (coreId: string): string => `evolve:${coreId}`;

/** Who appends the claims and releases of `evolve:<core>`. */
export const EVOLVE_SCOPE_ACTOR = { kind: 'system', id: 'task-worker' } as const;

export interface EvolveScopeDeps {
  readonly store: EventStore;
  readonly source: CoreSource;
  /** Whether the host that wrote a claim may still run (the host identity check of task recovery). */
  readonly isHostAlive: (host: string) => boolean;
  /** Settles the task of a claim whose host is gone (the worker's cancel of an orphan); absent: left to recovery. */
  readonly settleOrphan?: ((ref: TaskRef, reason: string) => Promise<unknown>) | undefined;
}

/**
 * Takes the core's write scope `evolve:<core>` for the task, durably and across hosts: `core.evolve_claimed`
 * on the core stream, in one commit with the task's `task.started`, at the stream version read just before
 * (two hosts that both read the scope free cannot both claim it). While another evolve's claim holds, throws
 * {@link ExclusiveScopeBusyError} with nothing appended: the task stays `created` and is started later. A
 * claim expires with its holder: once its task ended, or its host is gone (then that task is settled first).
 */
export async function claimEvolveScope(deps: EvolveScopeDeps, ctx: TaskContext): Promise<void> {
  const coreId = deps.source.workingCopy.id;
  const scope = evolveScope(coreId);
  const { taskId } = ctx.task;
  // The expired claim this one replaces: kept across attempts, since settling its task releases it meanwhile.
  let supersedes: (EvolveClaim & { why: string }) | undefined;
  for (let attempt = 0; ; attempt++) {
    const state = await deps.source.revisions.state();
    const held = state.claim && state.claim.taskId !== taskId ? state.claim : undefined;
    if (held) {
      const why = await claimExpired(deps, held);
      if (why === undefined) throw new ExclusiveScopeBusyError(taskId, scope, held.taskId, scope);
      supersedes = { ...held, why };
    }
    try {
      await deps.source.revisions.claimEvolve({
        taskId,
        host: ctx.host,
        after: state,
        ...(supersedes ? { supersedes } : {}),
        also: [await ctx.startStream()],
        actor: EVOLVE_SCOPE_ACTOR,
      });
      return;
    } catch (error) {
      // The core stream moved since it was read (another claim, a save): read it again, a few times.
      const moved = error instanceof StreamVersionConflictError && error.streamId === coreStreamId(coreId);
      if (!moved) throw error;
      if (attempt >= 2) throw new ExclusiveScopeBusyError(taskId, scope, 'of another host', scope);
    }
  }
}

/** Why a claim no longer holds (its task ended, its host is gone), or undefined while it holds. */
async function claimExpired(deps: EvolveScopeDeps, held: EvolveClaim): Promise<string | undefined> {
  const task = await taskBoardReader(deps.store).get(held.taskId);
  if (!task) return `its task ${held.taskId} is not on the board`;
  if (isFinished(task.status)) return `its task ${held.taskId} ended ${task.status}`;
  if (deps.isHostAlive(held.host)) return undefined;
  const why = `its host ${held.host} is gone`;
  // The dead host's task is settled now (its working copy discarded, its child run cancelled), not at a restart.
  await deps.settleOrphan?.({ sessionId: task.sessionId, taskId: task.taskId }, why).catch(() => undefined);
  return why;
}
