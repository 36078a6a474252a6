import { DemiurgeError, ErrorCode } from '@demiurge/contracts';

/**
 * A path that leaves the workspace root: `..` out of it, an absolute path elsewhere, or a symlink (on the
 * path or at its end) whose real target is outside. Nothing was read or written.
 *
 * @example
 * ```ts
 * await resolveInWorkspace(root, '../secrets.txt'); // throws WorkspaceEscapeError
 * ```
 */
export class WorkspaceEscapeError extends DemiurgeError {
  override readonly name = 'WorkspaceEscapeError';
  readonly code = ErrorCode.WorkspaceEscape;
  constructor(
    /** The path as the caller gave it. */
    readonly path: string,
    /** The real path of the workspace root. */
    readonly root: string,
    /** Where the path really leads (symlinks resolved). */
    readonly resolved: string,
  ) {
    super(`path "${path}" is outside the workspace root ${root} (it resolves to ${resolved}); nothing was done`);
  }
}

/** Why a tool call failed; stable, for a client or a test to match on. */
export type ToolFailureReason =
  | 'invalid_path'
  | 'not_found'
  | 'not_a_directory'
  | 'is_a_directory'
  | 'not_a_file'
  | 'binary_file'
  | 'no_match'
  | 'ambiguous_match'
  | 'needs_task_runtime'
  | 'io';

/**
 * A tool call that could not do what it was asked (no such file, `old_text` not found, not a directory…).
 * The message is written for the model: it says what was wrong and, where it helps, what to do instead.
 *
 * @example
 * ```ts
 * try { await editFileTool.run(input, ctx); }
 * catch (e) { if (e instanceof ToolFailedError && e.reason === 'ambiguous_match') console.log(e.message); }
 * ```
 */
export class ToolFailedError extends DemiurgeError {
  override readonly name = 'ToolFailedError';
  readonly code = ErrorCode.ToolFailed;
  constructor(
    readonly reason: ToolFailureReason,
    message: string,
    /** The path the call was about, as the caller gave it. */
    readonly path?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The tool call was cancelled through `ctx.signal` (turn or run cancellation). Thrown only after the tool
 * stopped everything it started (for `shell`: after its whole process group is dead).
 */
export class ToolCancelledError extends DemiurgeError {
  override readonly name = 'ToolCancelledError';
  readonly code = ErrorCode.ToolFailed;
  readonly cancelled = true;
  constructor(
    readonly tool: string,
    options?: { cause?: unknown },
  ) {
    super(`${tool} was cancelled before it finished`, options);
  }
}

/**
 * The tool started its effect and lost sight of it before an outcome came back (an MCP server that crashed
 * mid-call): it may or may not have taken effect. The engine records the call `unknown` (never `failed`, never
 * re-run); only an operator or a reconciler resolves it.
 *
 * @example
 * ```ts
 * transport.onclose = () => reject(new ToolOutcomeUnknownError('fs__write_file', 'the MCP server fs exited'));
 * ```
 */
export class ToolOutcomeUnknownError extends DemiurgeError {
  override readonly name = 'ToolOutcomeUnknownError';
  readonly code = ErrorCode.ToolFailed;
  constructor(
    readonly tool: string,
    /** Why the outcome is unknown, recorded on `tool_call.unknown`. */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${tool}: outcome unknown: ${reason}`, options);
  }
}

/** Throws {@link ToolCancelledError} when `signal` is already aborted. */
export function throwIfCancelled(signal: AbortSignal, tool: string): void {
  if (signal.aborted) throw new ToolCancelledError(tool, { cause: signal.reason });
}
