import { DemiurgeError, ErrorCode, formatPath } from '@demiurge/contracts';
import type { z } from 'zod';

/** A claim token that is not the item's current one (or whose lease ran out): nothing was changed. */
export class StaleClaimError extends DemiurgeError {
  override readonly name = 'StaleClaimError';
  readonly code = ErrorCode.StaleClaim;
  constructor(
    readonly workId: string,
    readonly presented: string,
    readonly reason: string,
  ) {
    super(`stale claim on work ${workId}: ${reason}; nothing was changed`);
  }
}

/** The work item is not claimable now (its state, or not due yet). */
export class NotClaimableError extends DemiurgeError {
  override readonly name = 'NotClaimableError';
  readonly code = ErrorCode.NotClaimable;
  constructor(
    readonly workId: string,
    readonly reason: string,
  ) {
    super(`work ${workId} cannot be claimed: ${reason}`);
  }
}

/** No such task or work item, or (for tasks) one owned by another session: both read the same. */
export class NotFoundError extends DemiurgeError {
  override readonly name = 'NotFoundError';
  readonly code = ErrorCode.NotFound;
  constructor(
    readonly aggregate: 'task' | 'work item' | 'delivery' | 'session' | 'run' | 'turn' | 'tool call' | 'approval',
    readonly id: string,
  ) {
    super(`no ${aggregate} ${id}`);
  }
}

/** A task or work kind no registry entry describes. */
export class UnknownKindError extends DemiurgeError {
  override readonly name = 'UnknownKindError';
  readonly code = ErrorCode.UnknownKind;
  constructor(
    readonly aggregate: 'task' | 'work',
    readonly kind: string,
    readonly known: readonly string[],
  ) {
    super(
      `"${kind}" is not a ${aggregate} kind; ${aggregate} kinds: ${known.join(', ')}` +
        (aggregate === 'task' ? ' (foreground turns and tool calls are never tasks)' : ''),
    );
  }
}

/** A spec failed its zod schema; `path` names the field. */
export class InvalidSpecError extends DemiurgeError {
  override readonly name = 'InvalidSpecError';
  readonly code = ErrorCode.InvalidSpec;
  constructor(
    readonly what: string,
    readonly path: readonly PropertyKey[],
    readonly detail: string,
  ) {
    super(`invalid ${what}: ${formatPath(path)}: ${detail}`);
  }
}

/** A blocked task that was marked not resumable. */
export class NotResumableError extends DemiurgeError {
  override readonly name = 'NotResumableError';
  readonly code = ErrorCode.NotResumable;
  constructor(
    readonly taskId: string,
    readonly reason: string,
  ) {
    super(`task ${taskId} is blocked and not resumable (${reason}); cancel it instead`);
  }
}

/**
 * A command outside its origin scope, e.g. a completion acknowledged by a session other than the one that
 * submitted the task. Nothing was changed.
 */
export class OutOfScopeError extends DemiurgeError {
  override readonly name = 'OutOfScopeError';
  readonly code = ErrorCode.OutOfScope;
  readonly taskId: string;
  /** The session the notice belongs to. */
  readonly scope: string;
  /** The session that tried. */
  readonly presented: string;
  constructor(message: string, fields: { taskId: string; scope: string; presented: string }) {
    super(`${message}; nothing was changed`);
    this.taskId = fields.taskId;
    this.scope = fields.scope;
    this.presented = fields.presented;
  }
}

/** Parses with a zod schema, throwing {@link InvalidSpecError} that names the first bad field. */
export function parseSpec<S extends z.ZodType>(
  what: string,
  schema: S,
  value: unknown,
  prefix: PropertyKey[] = [],
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new InvalidSpecError(what, [...prefix, ...(issue?.path ?? [])], issue?.message ?? 'invalid');
}
