import { DemiurgeError, ErrorCode } from '@demiurge/contracts';

/** A core revision that is not recorded, or whose snapshot is not stored. */
export class UnknownRevisionError extends DemiurgeError {
  override readonly name = 'UnknownRevisionError';
  readonly code = ErrorCode.NotFound;
  constructor(
    readonly revision: string,
    readonly detail: string,
    options?: ErrorOptions,
  ) {
    super(`unknown core revision ${revision}: ${detail}`, options);
  }
}

/**
 * A run whose turn is pinned to a core revision that is gone (its snapshot was removed from the home):
 * it is not resumed on another revision, which would change what the turn runs with mid-way.
 */
export class PinnedRevisionGoneError extends DemiurgeError {
  override readonly name = 'PinnedRevisionGoneError';
  readonly code = ErrorCode.NotResumable;
  constructor(
    readonly coreId: string,
    readonly revision: string,
    readonly where: string,
  ) {
    super(
      `the turn is pinned to revision ${revision.slice(0, 12)} of core ${coreId}, whose snapshot is gone from ${where}; ` +
        'it is not resumed on another revision (restore the snapshot, or cancel the run)',
    );
  }
}

/** `core save` (or an evolve) refused: the core's check failed; nothing was recorded. */
export class CoreCheckFailedError extends DemiurgeError {
  override readonly name = 'CoreCheckFailedError';
  readonly code = ErrorCode.InvalidSpec;
  constructor(
    readonly dir: string,
    readonly problems: readonly string[],
  ) {
    super(`the core check failed, nothing was saved (${dir}): ${problems.join('; ')}`);
  }
}

/**
 * An evolve task that no longer holds its core's write scope `evolve:<core>` tried to record a revision (its
 * claim expired and another evolve took it over): nothing was recorded.
 */
export class EvolveClaimLostError extends DemiurgeError {
  override readonly name = 'EvolveClaimLostError';
  readonly code = ErrorCode.StaleClaim;
  constructor(
    readonly coreId: string,
    readonly taskId: string,
    readonly heldBy: string | undefined,
  ) {
    super(
      `task ${taskId} no longer holds the write scope evolve:${coreId} (${heldBy ? `task ${heldBy} holds it` : 'nobody holds it'}); nothing was saved`,
    );
  }
}
