import { type Actor, DemiurgeError, ErrorCode } from '@demiurge/contracts';

/** Another turn runs in the session and the caller asked not to wait for it. */
export class SessionBusyError extends DemiurgeError {
  override readonly name = 'SessionBusyError';
  readonly code = ErrorCode.SessionBusy;
  constructor(
    readonly sessionId: string,
    readonly activeTurnId: string,
  ) {
    super(`session ${sessionId} is busy with turn ${activeTurnId}`);
  }
}

/** A run lease token that is not the run's current one (or whose lease expired): nothing was changed. */
export class StaleRunLeaseError extends DemiurgeError {
  override readonly name = 'StaleRunLeaseError';
  readonly code = ErrorCode.StaleClaim;
  constructor(
    readonly runId: string,
    readonly reason: string,
  ) {
    super(`stale lease on run ${runId}: ${reason}; nothing was changed`);
  }
}

/** The run cannot be resumed: its state or its recorded resumability says so. */
export class RunNotResumableError extends DemiurgeError {
  override readonly name = 'RunNotResumableError';
  readonly code = ErrorCode.NotResumable;
  constructor(
    readonly runId: string,
    readonly reason: string,
  ) {
    super(`run ${runId} cannot be resumed: ${reason}`);
  }
}

/** A principal tried to cancel a run it does not own and has no right over (see `mayCancelRun`). */
export class RunNotOwnedError extends DemiurgeError {
  override readonly name = 'RunNotOwnedError';
  readonly code = ErrorCode.NotOwner;
  constructor(
    readonly runId: string,
    readonly principal: Actor,
    readonly by: Actor,
  ) {
    super(
      `run ${runId} belongs to ${principal.kind} ${principal.id}; ${by.kind} ${by.id} may not cancel it ` +
        '(only the principal that started it, the host, or an operator with the admin CLI: demiurge runs cancel)',
    );
  }
}
