import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { cliBin } from './cli.js';

/** The one line `demiurge serve --json` prints once it serves. */
export interface ReadyLine {
  readonly ready: true;
  readonly home: string;
  readonly socket: string;
  readonly owner: string;
  readonly provider: string;
  readonly core: string;
}

export interface HostExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A running `demiurge serve --json --home H` child. */
export interface HostProcess {
  readonly pid: number;
  readonly ready: ReadyLine;
  readonly exited: Promise<HostExit>;
  /** What it wrote on stderr so far (the last 64 KiB). */
  stderr(): string;
  /** Sends `signal` (SIGKILL by default) and resolves once the process is gone. */
  stop(signal?: NodeJS.Signals): Promise<HostExit>;
}

export interface StartHostOptions {
  /** The working directory of the host (its default workspace). */
  readonly cwd: string;
  readonly env?: NodeJS.ProcessEnv;
  /** More arguments of `serve` (e.g. `--log-json`). */
  readonly args?: readonly string[];
  /** How long the ready line may take (default 20 s); later, the start fails with the host's stderr. */
  readonly readyTimeoutMs?: number;
}

const STDERR_KEEP = 64 * 1024;

/** Starts the real host on `home` and resolves with its ready line; fails with its stderr when it is not ready in time. */
export function startHost(home: string, options: StartHostOptions): Promise<HostProcess> {
  const child: ChildProcessByStdio<null, Readable, Readable> = spawn(
    process.execPath,
    [cliBin, 'serve', '--json', '--home', home, ...(options.args ?? [])],
    { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-STDERR_KEEP);
  });
  const exited = new Promise<HostExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const stop = async (signal: NodeJS.Signals = 'SIGKILL') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  // Generous: a loaded 2-core CI machine can take many seconds to start a Node process.
  const timeoutMs = options.readyTimeoutMs ?? 60_000;
  return new Promise<HostProcess>((resolve, reject) => {
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void stop().then(() =>
        reject(new Error(`demiurge serve --home ${home} ${why}\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`)),
      );
    };
    const timer = setTimeout(() => fail(`printed no ready line within ${timeoutMs} ms`), timeoutMs);
    child.once('error', (err) => fail(`could not start: ${err.message}`));
    void exited.then((exit) => fail(`exited (code ${exit.code}, signal ${exit.signal}) before it was ready`));
    child.stdout.on('data', (d: Buffer) => {
      if (settled) return;
      stdout += d.toString();
      const newline = stdout.indexOf('\n');
      if (newline < 0 || child.pid === undefined) return;
      let ready: ReadyLine;
      try {
        ready = JSON.parse(stdout.slice(0, newline)) as ReadyLine;
      } catch {
        fail('printed a first line that is not JSON');
        return;
      }
      settled = true;
      clearTimeout(timer);
      resolve({ pid: child.pid, ready, exited, stderr: () => stderr, stop });
    });
  });
}
