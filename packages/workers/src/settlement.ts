import type { RuntimeControlPlane, TaskRef } from '@demiurge/control-plane';
import { IllegalTransitionError } from '@demiurge/lifecycle';
import type { TaskView } from '@demiurge/projector-task-board';
import { type CleanupError, cleanupErrorOf, describeCleanupError } from './cleanup-error.js';
import type { RecoverContext, TaskHandler, TaskOutcome } from './task-handler.js';

/**
 * Commits an outcome as the task's one terminal event through the control plane (which adds the completion
 * notice in the same commit). A task that already ended elsewhere keeps that ending: it is read back.
 */
export async function commitOutcome(
  controlPlane: RuntimeControlPlane,
  ref: TaskRef,
  outcome: TaskOutcome,
): Promise<TaskView> {
  try {
    switch (outcome.status) {
      case 'completed': {
        const { status: _, ...result } = outcome;
        return await controlPlane.completeTask(ref, result);
      }
      case 'failed':
        return await controlPlane.failTask(ref, outcome.error, outcome.exitCode);
      case 'cancelled':
        return await controlPlane.cancelTask(
          ref,
          outcome.reason,
          outcome.cleanupError ? { cleanupError: outcome.cleanupError } : {},
        );
    }
  } catch (error) {
    if (error instanceof IllegalTransitionError) return controlPlane.getTask(ref);
    throw error;
  }
}

/** How an orphan is settled: cancelled by a caller, or failed because its owner (named) is gone. */
export type OrphanEnding = { readonly cancel: string } | { readonly fail: string };

export interface OrphanDeps {
  readonly controlPlane: RuntimeControlPlane;
  /** The handler of the task's kind on this host, if any: it checks (and stops) what the owner left. */
  readonly handler: TaskHandler | undefined;
  readonly recover: RecoverContext;
}

/**
 * Settles an unfinished task that no live worker owns: the handler stops its recorded work if it can verify
 * it, then one terminal event says what happened (`owner_lost`, or the caller's cancel reason).
 */
export async function settleOrphan(view: TaskView, how: OrphanEnding, deps: OrphanDeps): Promise<TaskView> {
  let what: string;
  let cleanupError: CleanupError | undefined;
  try {
    what = deps.handler?.recover
      ? await deps.handler.recover(view, deps.recover)
      : 'no handler on this host could check its work';
  } catch (error) {
    // Stopping what the owner left failed: the task still ends now, with the error recorded.
    cleanupError = cleanupErrorOf(error);
    what = describeCleanupError(cleanupError);
  }
  const outcome: TaskOutcome =
    'cancel' in how
      ? {
          status: 'cancelled',
          reason: `${how.cancel} (its owner is gone; ${what})`,
          ...(cleanupError ? { cleanupError } : {}),
        }
      : {
          status: 'failed',
          error: {
            code: 'owner_lost',
            message: `host ${how.fail} stopped while the task was running (settled by ${deps.recover.host}); ${what}`,
          },
        };
  return commitOutcome(deps.controlPlane, { sessionId: view.sessionId, taskId: view.taskId }, outcome);
}
