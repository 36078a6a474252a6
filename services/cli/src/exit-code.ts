/** The exit codes of every command (a module of its own, so `--help` loads none of the runtime). */
export const ExitCode = {
  ok: 0,
  /** The runtime refused, a check failed, or violations were found. */
  failure: 1,
  /** A usage or configuration error. */
  usage: 2,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
