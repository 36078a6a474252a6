import { DemiurgeError, ErrorCode } from '@demiurge/contracts';

/**
 * The worker is closing (or closed): admission is shut, so no task starts any more. Nothing was appended.
 *
 * @example
 * ```ts
 * await worker.close();
 * await worker.start(ref); // throws WorkerClosedError
 * ```
 */
export class WorkerClosedError extends DemiurgeError {
  override readonly name = 'WorkerClosedError';
  readonly code = ErrorCode.NotClaimable;
  constructor(
    readonly host: string,
    readonly taskId: string,
  ) {
    super(`host ${host} is shutting down: task ${taskId} was not started (admission is closed)`);
  }
}

/**
 * Another running task of this worker holds the same exclusive write scope (or one inside or around it).
 * Nothing was appended: the task stays `created` and can be started once the other one ends.
 */
export class ExclusiveScopeBusyError extends DemiurgeError {
  override readonly name = 'ExclusiveScopeBusyError';
  readonly code = ErrorCode.NotClaimable;
  constructor(
    readonly taskId: string,
    readonly scope: string,
    readonly heldBy: string,
    readonly heldScope: string,
  ) {
    super(
      `task ${taskId} needs exclusive write access to ${scope}, but task ${heldBy} is running with ` +
        `exclusive scope ${heldScope}; start it after that task ends`,
    );
  }
}

/** The worker has no handler for the task's kind (e.g. `agent.spawn` before its handler is registered). */
export class NoTaskHandlerError extends DemiurgeError {
  override readonly name = 'NoTaskHandlerError';
  readonly code = ErrorCode.UnknownKind;
  constructor(
    readonly taskId: string,
    readonly kind: string,
    readonly handled: readonly string[],
  ) {
    super(`no handler for ${kind} task ${taskId}; this worker runs: ${handled.join(', ') || 'nothing'}`);
  }
}

/** The task is not in a state this worker can act on (start a task that is not `created`, cancel another host's task). */
export class TaskNotStartableError extends DemiurgeError {
  override readonly name = 'TaskNotStartableError';
  readonly code = ErrorCode.NotClaimable;
  constructor(
    readonly taskId: string,
    readonly status: string,
    readonly reason: string,
  ) {
    super(`task ${taskId} is ${status}: ${reason}`);
  }
}

/** The task runs under another host's worker; only that host (or a recovery after it died) can stop it. */
export class TaskNotOwnedError extends DemiurgeError {
  override readonly name = 'TaskNotOwnedError';
  readonly code = ErrorCode.NotClaimable;
  constructor(
    readonly taskId: string,
    readonly owner: string,
    readonly host: string,
  ) {
    super(
      `task ${taskId} is running on host ${owner}, not on ${host}; cancel it there ` +
        '(or run recover() on a host once its owner is known dead)',
    );
  }
}
