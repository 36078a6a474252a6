import { fstatSync } from 'node:fs';

/** Why a long-running command (`events --follow`) was asked to stop. */
export type StopReason = 'SIGINT' | 'SIGTERM' | 'stdin closed';

/** Where a command writes: results to `out`, progress and diagnostics to `err`. */
export interface CommandIo {
  out(text: string): void;
  err(text: string): void;
  /** A terminal to draw progress bars on (stderr when it is a TTY); absent, a command prints no progress. */
  readonly progress?: NodeJS.WriteStream;
  /**
   * Calls `listener` once when the user asks a long-running command to stop; returns the disposer.
   * Absent, such a command runs until its store closes.
   */
  onStop?(listener: (reason: StopReason) => void): () => void;
}

/**
 * Stdin is watched for its end only when a parent can close it: a pipe, a socket or a terminal (Ctrl-D).
 * `/dev/null` or a file ends at once and would stop `--follow` before it started.
 */
function stdinCanSignalStop(): boolean {
  if (process.stdin.isTTY) return true;
  try {
    const stat = fstatSync(0);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return false;
  }
}

function onProcessStop(listener: (reason: StopReason) => void): () => void {
  let done = false;
  const fire = (reason: StopReason) => {
    if (done) return;
    done = true;
    dispose();
    listener(reason);
  };
  const onInt = () => fire('SIGINT');
  const onTerm = () => fire('SIGTERM');
  const onEnd = () => fire('stdin closed');
  const watchStdin = stdinCanSignalStop();
  process.once('SIGINT', onInt);
  process.once('SIGTERM', onTerm);
  if (watchStdin) {
    process.stdin.once('end', onEnd);
    process.stdin.once('close', onEnd);
    process.stdin.on('data', ignore);
    process.stdin.resume();
  }
  function dispose() {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
    if (watchStdin) {
      process.stdin.off('end', onEnd);
      process.stdin.off('close', onEnd);
      process.stdin.off('data', ignore);
      process.stdin.pause();
      if (process.stdin.isTTY) process.stdin.unref?.();
    }
  }
  return dispose;
}

function ignore(): void {}

export const processIo: CommandIo = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  ...(process.stderr.isTTY ? { progress: process.stderr } : {}),
  onStop: onProcessStop,
};
