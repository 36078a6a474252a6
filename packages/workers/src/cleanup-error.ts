/** A failed cleanup as recorded on `task.cancelled`: the error's type and message. */
export interface CleanupError {
  /** The error's class name, with its system code when it has one: `TypeError`, `Error (EPERM)`. */
  readonly type: string;
  readonly message: string;
}

/**
 * What a cleanup (stopping a process tree, a handler's `stop`) threw, as {@link CleanupError}.
 *
 * @example
 * ```ts
 * cleanupErrorOf(Object.assign(new Error('kill EPERM'), { code: 'EPERM' })); // { type: 'Error (EPERM)', message: 'kill EPERM' }
 * ```
 */
export function cleanupErrorOf(error: unknown): CleanupError {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    const name = error.name || error.constructor?.name || 'Error';
    return {
      type: typeof code === 'string' && code.length > 0 ? `${name} (${code})` : name,
      message: error.message || 'no message',
    };
  }
  return { type: typeof error, message: String(error) || 'no message' };
}

/** `cleanup failed: Error (EPERM): kill EPERM`, for reasons and failure messages. */
export function describeCleanupError(error: CleanupError): string {
  return `cleanup failed: ${error.type}: ${error.message}`;
}
