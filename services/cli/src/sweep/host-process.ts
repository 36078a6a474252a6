import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { COMMIT_TRACE_ENV, CRASH_AT_COMMIT_ENV, INJECT_BUG_ENV } from '@demiurge/crash-sweep';

/** This package's `demiurge` binary (dist/bin.js): the host and `verify` the sweep starts are this CLI. */
export const cliBin = resolve(import.meta.dirname, '..', 'bin.js');

/**
 * The environment of a child the sweep starts: this process's, without what would crash it where the sweep did
 * not ask (the crash-point variables, set per run by the driver) or, unless `keepStoreUrl`, point it elsewhere
 * (`DEMIURGE_STORE_URL`: the sweep's homes are SQLite files, which the commit hook needs), plus `extra`.
 */
export function childEnv(extra: NodeJS.ProcessEnv = {}, keepStoreUrl = false): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of [CRASH_AT_COMMIT_ENV, COMMIT_TRACE_ENV, INJECT_BUG_ENV]) delete env[name];
  if (!keepStoreUrl) delete env.DEMIURGE_STORE_URL;
  return { ...env, ...extra };
}

/** The one line `demiurge serve --json` prints once it serves. */
export interface ReadyLine {
  readonly ready: true;
  readonly home: string;
  readonly socket: string;
  readonly owner: string;
  readonly provider?: string;
  readonly core?: string;
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
  /** Variables added to {@link childEnv}'s environment. */
  readonly env?: NodeJS.ProcessEnv;
  /** Pass this process's `DEMIURGE_STORE_URL` on (the crash suites on PostgreSQL); the sweep drops it. */
  readonly keepStoreUrl?: boolean;
  /** More arguments of `serve` (e.g. `--log-json`). */
  readonly args?: readonly string[];
  /** How long the ready line may take (default 60 s); later, the start fails with the host's stderr. */
  readonly readyTimeoutMs?: number;
}

const STDERR_KEEP = 64 * 1024;

/** A host the sweep started exited or hung before it served (a core whose slots fail at start, say). */
export class HostStartError extends Error {
  override readonly name = 'HostStartError';
  constructor(
    readonly home: string,
    readonly why: string,
    readonly stderr: string,
  ) {
    const said = stderr.trim().split('\n').slice(-5).join('\n');
    super(`demiurge serve --home ${home} ${why}${said ? `:\n${said}` : ''}`);
  }
}

/**
 * Starts the real host on `home` and resolves with its ready line; fails ({@link HostStartError}, with its
 * stderr) when it exits first or is not ready in time. The sweep and the crash suites start their hosts here.
 */
export function startHost(home: string, options: StartHostOptions): Promise<HostProcess> {
  const child: ChildProcessByStdio<null, Readable, Readable> = spawn(
    process.execPath,
    [cliBin, 'serve', '--json', '--home', home, ...(options.args ?? [])],
    { cwd: options.cwd, env: childEnv(options.env, options.keepStoreUrl), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-STDERR_KEEP);
  });
  const exited = new Promise<HostExit>((done) => child.once('exit', (code, signal) => done({ code, signal })));
  const stop = async (signal: NodeJS.Signals = 'SIGKILL') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  // Generous: a loaded 2-core machine can take many seconds to start a Node process.
  const timeoutMs = options.readyTimeoutMs ?? 60_000;
  return new Promise<HostProcess>((resolveStart, reject) => {
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void stop().then(() => reject(new HostStartError(home, why, stderr)));
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
      resolveStart({ pid: child.pid, ready, exited, stderr: () => stderr, stop });
    });
  });
}

/** `demiurge <args>` as a child (its output collected): the sweep's `verify`. */
export function demiurgeChild(
  args: readonly string[],
): Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }> {
  return new Promise((done, reject) => {
    const child = spawn(process.execPath, [cliBin, ...args], { env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => done({ code, stdout, stderr }));
  });
}
