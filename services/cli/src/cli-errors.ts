import { DemiurgeError, ErrorCode } from '@demiurge/contracts';
import { DamagedStoreError, UnknownProjectorError } from '@demiurge/event-store';
import { ConfigError } from '@demiurge/host';

/** The exit codes of every command. */
export const ExitCode = {
  ok: 0,
  /** The runtime refused, a check failed, or violations were found. */
  failure: 1,
  /** A usage or configuration error. */
  usage: 2,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** The command line asked for something that does not exist (an unknown projector...): exit 2. */
export class UsageError extends DemiurgeError {
  override readonly name = 'UsageError';
  readonly code = ErrorCode.InvalidSpec;
}

/** The exit code a command's error ends the CLI with: 2 for usage and configuration errors, else 1. */
export function exitCodeOf(err: unknown): ExitCode {
  return err instanceof UsageError || err instanceof ConfigError || err instanceof UnknownProjectorError
    ? ExitCode.usage
    : ExitCode.failure;
}

/** The one line a person reads: a Demiurge error's own message, anything else marked unexpected. */
export function describeError(err: unknown): string {
  if (err instanceof DamagedStoreError) return `${err.message}; run "demiurge doctor" for a full check`;
  if (err instanceof DemiurgeError) return err.message;
  return `unexpected error: ${err instanceof Error ? err.message : String(err)}`;
}
