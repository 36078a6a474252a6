import { DemiurgeError, ErrorCode } from '@demiurge/contracts';
import { DamagedStoreError, StreamVersionConflictError, UnknownProjectorError } from '@demiurge/event-store';
import { ConfigError, CoreLoadError, FakeScriptError, HttpAddressError, HttpListenError } from '@demiurge/host';
import {
  GatewayAlreadyRunningError,
  OperatorConnectionClosedError,
  OperatorRequestError,
  UnsafeRuntimeDirError,
} from '@demiurge/operator';
import { ExitCode } from './exit-code.js';

export { ExitCode };

/** The command line asked for something that does not exist (an unknown projector...): exit 2. */
export class UsageError extends DemiurgeError {
  override readonly name = 'UsageError';
  readonly code = ErrorCode.InvalidSpec;
}

/**
 * The exit code a command's error ends the CLI with: 2 for usage and configuration errors (a bad
 * `config.yaml`, an Agent Core whose `agent.yaml` or `pipelines.yaml` does not load, a fake provider script that
 * does not load, a `--http` address that cannot be used), else 1.
 */
export function exitCodeOf(err: unknown): ExitCode {
  return err instanceof UsageError ||
    err instanceof ConfigError ||
    err instanceof CoreLoadError ||
    err instanceof FakeScriptError ||
    err instanceof UnknownProjectorError ||
    err instanceof HttpAddressError ||
    err instanceof HttpListenError
    ? ExitCode.usage
    : ExitCode.failure;
}

/** Errors of the operator gateway and its client that are refusals, not failures of this program. */
const OPERATOR_REFUSALS = [
  GatewayAlreadyRunningError,
  UnsafeRuntimeDirError,
  OperatorConnectionClosedError,
  OperatorRequestError,
] as const;

/**
 * What the system or SQLite said, for refusals a person can act on: the disk is full, the store is damaged,
 * a file or socket cannot be reached. Undefined for anything else.
 */
function expectedRefusal(err: Error): string | undefined {
  const code = (err as NodeJS.ErrnoException).code;
  if (typeof code !== 'string') return undefined;
  const { path, address } = err as { path?: string; address?: string };
  const where = path ?? address;
  const at = where ? ` (${where})` : '';
  if (code === 'ENOSPC' || code === 'SQLITE_FULL' || code === 'EDQUOT') {
    return `the disk is full${at}: ${err.message}; free some space and try again`;
  }
  if (code === 'SQLITE_CORRUPT' || code.startsWith('SQLITE_CORRUPT_') || code === 'SQLITE_NOTADB') {
    return `damaged store: ${err.message}; run "demiurge doctor"`;
  }
  if (code.startsWith('SQLITE_IOERR')) return `the store could not be read or written: ${err.message} (${code})`;
  if (code.startsWith('SQLITE_READONLY') || code === 'SQLITE_CANTOPEN' || code === 'SQLITE_PERM') {
    return `the store cannot be opened for writing: ${err.message} (${code})`;
  }
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return `permission denied${at}: ${err.message}`;
  if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'EPIPE') {
    return `the operator socket${at} refused the connection: ${err.message}`;
  }
  if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') return `not found${at}: ${err.message}`;
  if (code === 'EMFILE' || code === 'ENFILE' || code === 'ENOMEM') return `out of resources: ${err.message}`;
  return undefined;
}

/**
 * The one line a person reads: a Demiurge error's own message; the gateway's refusals and the system's
 * expected refusals (disk full, damaged store, permission, a refused socket) said plainly; anything else
 * marked unexpected.
 */
export function describeError(err: unknown): string {
  if (err instanceof DamagedStoreError) return `${err.message}; run "demiurge doctor" for a full check`;
  if (err instanceof StreamVersionConflictError) {
    // Writers retry a conflict from a fresh read; this one outlasted the retries (other writers kept winning).
    return `other processes kept writing to ${err.streamId} at the same moment and this command gave up after its retries (that write was not recorded): run it again`;
  }
  if (err instanceof DemiurgeError) return err.message;
  if (OPERATOR_REFUSALS.some((type) => err instanceof type)) return (err as Error).message;
  if (err instanceof Error) {
    const refusal = expectedRefusal(err);
    if (refusal) return refusal;
  }
  return `unexpected error: ${err instanceof Error ? err.message : String(err)}`;
}
