import type { ExitCode } from './exit-code.js';
import type { CommandIo } from './io.js';

/** What every registered command shares: where it writes, and the exit code it ended with. */
export interface CommandContext {
  readonly io: CommandIo;
  /** Set by a command that finished but found problems (`verify`, `doctor`); 0 otherwise. */
  exitCode: ExitCode;
}

/** Wraps a command body so the exit code it returns (if any) becomes the CLI's. */
export function action<A extends unknown[]>(
  ctx: CommandContext,
  body: (...args: A) => Promise<ExitCode | undefined> | Promise<void>,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    const code = await body(...args);
    if (typeof code === 'number') ctx.exitCode = code;
  };
}
