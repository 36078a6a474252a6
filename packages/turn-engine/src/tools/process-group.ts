import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import type { SpawnedProcess } from '../tool.js';
import { ToolFailedError } from './errors.js';
import { TailBuffer } from './tail-buffer.js';
import { describeError, errnoCode } from './workspace-path.js';

export interface ProcessGroupRun {
  readonly command: string;
  /** A real directory (already checked to be inside the workspace). */
  readonly cwd: string;
  readonly timeoutMs: number;
  /** Aborting it stops the whole group; the run then ends with `cancelled: true`. */
  readonly signal: AbortSignal;
  /** How much of the combined stdout/stderr to keep (the tail). */
  readonly maxOutputBytes: number;
  readonly env?: NodeJS.ProcessEnv;
  /** How long the group gets between SIGTERM and SIGKILL. Default 2000 ms. */
  readonly killGraceMs?: number;
  /**
   * Records the group before its command runs: the shell is spawned held (it waits on its stdin), this is
   * called with the group's identity, and the command starts only once it resolves. If it rejects, or this
   * process dies first, the held shell exits without running anything. `spawnId` goes into the environment
   * as `DEMIURGE_SPAWN_ID`, so every process of the tree can be told apart from a stranger.
   */
  readonly onStarted?: (process: SpawnedProcess) => Promise<void>;
  readonly spawnId?: string;
}

/** The environment variable a spawned tree carries (same as @demiurge/workers' SPAWN_ID_ENV). */
export const SPAWN_ID_ENV = 'DEMIURGE_SPAWN_ID';

/**
 * The held shell: waits for one line on stdin (EOF — its parent died before releasing it — exits 125
 * without running anything), then becomes the command's shell with stdin from /dev/null (same pid).
 */
const HELD = 'IFS= read -r _ || exit 125; exec /bin/sh -c "$1" </dev/null';

export interface ProcessGroupResult {
  /** The shell's exit code; `null` when it was ended by a signal. */
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly timedOut: boolean;
  readonly cancelled: boolean;
  /** The shell exited but left processes in its group (e.g. `cmd &`); they were stopped. */
  readonly strayProcessesStopped: boolean;
  readonly output: TailBuffer;
}

/** How long to wait for the pipes to close after the shell exits (children may still be writing). */
const PIPE_DRAIN_MS = 100;
/** How long to wait for the group to die after SIGKILL before giving up. */
const KILL_WAIT_MS = 1000;
const POLL_MS = 20;

/**
 * Runs `/bin/sh -c command` as the leader of a new process group, with stdin closed. On timeout or abort the
 * whole group gets SIGTERM, then SIGKILL after the grace period, and the run ends only once the group is
 * gone. When the shell exits on its own, processes it left in the group are stopped the same way, so a
 * foreground call never leaves anything running. Resolves with the outcome (a non-zero exit, a timeout and a
 * cancellation are outcomes, not errors); rejects only when the shell cannot be started.
 *
 * @example
 * ```ts
 * const run = await runInProcessGroup({ command: 'make test', cwd, timeoutMs: 60_000, signal, maxOutputBytes: 32_768 });
 * if (run.timedOut) console.log('timed out');
 * ```
 */
export function runInProcessGroup(options: ProcessGroupRun): Promise<ProcessGroupResult> {
  const graceMs = options.killGraceMs ?? 2000;
  return new Promise((resolve, reject) => {
    const output = new TailBuffer(options.maxOutputBytes);
    const held = options.onStarted !== undefined;
    const env = { ...(options.env ?? process.env), ...(options.spawnId ? { [SPAWN_ID_ENV]: options.spawnId } : {}) };
    const child = spawn('/bin/sh', held ? ['-c', HELD, 'sh', options.command] : ['-c', options.command], {
      cwd: options.cwd,
      env,
      detached: true,
      stdio: [held ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    }) as ChildProcessByStdio<Writable | null, Readable, Readable>;
    const pid = child.pid;
    // Read at once (synchronously), before the event loop can reap a shell that exited at once.
    const startMarker = pid === undefined ? undefined : startMarkerOf(pid);
    let timedOut = false;
    let cancelled = false;
    let stopping: Promise<void> | undefined;
    const stop = (): Promise<void> => {
      if (pid === undefined) return Promise.resolve();
      stopping ??= stopGroup(pid, graceMs);
      return stopping;
    };
    const timer = setTimeout(() => {
      timedOut = true;
      void stop();
    }, options.timeoutMs);
    const onAbort = (): void => {
      cancelled = true;
      void stop();
    };
    options.signal.addEventListener('abort', onAbort, { once: true });
    // Aborted while the caller was still resolving paths: the listener above would never fire.
    if (options.signal.aborted) onAbort();
    const detach = (): void => {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
    };

    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    const pipesClosed = Promise.all([
      new Promise((done) => child.stdout.once('close', done)),
      new Promise((done) => child.stderr.once('close', done)),
    ]);

    let recordFailed: unknown;
    if (held && pid !== undefined) {
      child.stdin?.on('error', () => undefined); // the shell may be gone already (EPIPE): its exit settles the run
      const record: SpawnedProcess = {
        spawnId: options.spawnId ?? String(pid),
        pid,
        pgid: pid,
        platform: process.platform,
        startMarker,
      };
      options.onStarted!(record).then(
        () => child.stdin?.end('go\n'),
        (error: unknown) => {
          recordFailed = error;
          child.stdin?.destroy();
          void stop();
        },
      );
    }

    child.once('error', (error) => {
      detach();
      void stop().finally(() =>
        reject(new ToolFailedError('io', `cannot start /bin/sh: ${describeError(error)}`, undefined, { cause: error })),
      );
    });
    child.once('exit', (exitCode, signal) => {
      detach();
      const settle = async (): Promise<ProcessGroupResult> => {
        await Promise.race([pipesClosed, delay(PIPE_DRAIN_MS)]);
        const strays = stopping === undefined && pid !== undefined && (await groupAlive(pid));
        if (strays || stopping !== undefined) await stop();
        // Once the group is dead its pipes close, unless something left the group and still holds them.
        await Promise.race([pipesClosed, delay(PIPE_DRAIN_MS)]);
        child.stdout.destroy();
        child.stderr.destroy();
        return { exitCode, signal, timedOut, cancelled, strayProcessesStopped: strays, output };
      };
      settle().then((result) => {
        if (recordFailed !== undefined && !cancelled) {
          reject(
            new ToolFailedError(
              'io',
              `could not record the process before running it: ${describeError(recordFailed)}`,
              undefined,
              {
                cause: recordFailed,
              },
            ),
          );
        } else resolve(result);
      }, reject);
    });
  });
}

/**
 * The start marker of a running process, in the format of @demiurge/workers: `linux:<boot id>:<start time>`
 * (field 22 of /proc/<pid>/stat); undefined off Linux or once the process is gone.
 */
export function startMarkerOf(pid: number): string | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const starttime = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return starttime && /^\d+$/.test(starttime) ? `linux:${boot}:${starttime}` : undefined;
  } catch {
    return undefined;
  }
}

/** SIGTERM to the group, SIGKILL after `graceMs`; resolves once the group is gone (or KILL_WAIT_MS later). */
async function stopGroup(pgid: number, graceMs: number): Promise<void> {
  if (!signalGroup(pgid, 'SIGTERM')) return;
  if (await groupGone(pgid, graceMs)) return;
  signalGroup(pgid, 'SIGKILL');
  await groupGone(pgid, KILL_WAIT_MS);
}

async function groupGone(pgid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (!(await groupAlive(pgid))) return true;
    await delay(POLL_MS);
  }
  return !(await groupAlive(pgid));
}

/**
 * Whether a process of the group is still running. A zombie is dead: orphans are reaped by init, and where
 * init reaps late (a container's PID 1) or never, waiting for that would only stall the call. On Linux the
 * group's members are read from /proc to tell zombies apart; elsewhere any member counts.
 */
export async function groupAlive(pgid: number): Promise<boolean> {
  if (!signalGroup(pgid, 0)) return false;
  if (process.platform !== 'linux') return true;
  const pids = (await readdir('/proc').catch(() => undefined))?.filter((name) => /^\d+$/.test(name));
  if (pids === undefined) return true;
  const states = await Promise.all(pids.map((pid) => processState(Number(pid))));
  return states.some((s) => s !== undefined && s.pgrp === pgid && s.state !== 'Z' && s.state !== 'X');
}

/** The state letter and process group of a process, from /proc/<pid>/stat; undefined when it is gone. */
export async function processState(pid: number): Promise<{ state: string; pgrp: number } | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (stat === undefined) return undefined;
  // "pid (comm) state ppid pgrp …"; comm may hold spaces and parentheses, so split after the last ')'.
  const [state = '', , pgrp = ''] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state, pgrp: Number(pgrp) };
}

/** Sends `signal` to every process in the group; false when the group no longer exists. */
function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    if (errnoCode(error) === 'ESRCH') return false;
    if (errnoCode(error) === 'EPERM') return true; // exists, but a member is not ours to signal
    throw error;
  }
}
