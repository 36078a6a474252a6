import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { isDead, listProcesses, SPAWN_ID_ENV, startMarkerOf } from './process-identity.js';

/** A held process group's identity, as its caller records it before the command runs. */
export interface HeldProcessGroup {
  /** Carried as `DEMIURGE_SPAWN_ID` in the environment of the group's processes. */
  readonly spawnId: string;
  readonly pid: number;
  readonly pgid: number;
  readonly platform: string;
  /** `linux:<boot id>:<start time>` ({@link startMarkerOf}); undefined where there is none. */
  readonly startMarker: string | undefined;
}

export interface ProcessGroupRun {
  readonly command: string;
  /** A real directory (already checked by the caller). */
  readonly cwd: string;
  readonly timeoutMs: number;
  /** Aborting it stops the whole group; the run then ends with `cancelled: true`. */
  readonly signal: AbortSignal;
  /** Every chunk of the combined stdout/stderr, in order. */
  readonly onOutput: (chunk: Buffer) => void;
  readonly env?: NodeJS.ProcessEnv;
  /** How long the group gets between SIGTERM and SIGKILL. Default 2000 ms. */
  readonly killGraceMs?: number;
  /**
   * Records the group before its command runs: the shell is spawned held (it waits on its stdin), this is
   * called with the group's identity, and the command starts only once it resolves. If it rejects, or this
   * process dies first, the held shell exits without running anything. `spawnId` goes into the environment
   * as `DEMIURGE_SPAWN_ID`, so every process of the tree can be told apart from a stranger.
   */
  readonly onStarted?: (group: HeldProcessGroup) => Promise<void>;
  readonly spawnId?: string;
}

export interface ProcessGroupResult {
  /** The shell's exit code; `null` when it was ended by a signal. */
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly timedOut: boolean;
  readonly cancelled: boolean;
  /** The shell exited but left processes in its group (e.g. `cmd &`); they were stopped. */
  readonly strayProcessesStopped: boolean;
}

/**
 * The shell could not be started (`spawn`), or the group could not be recorded before its command ran
 * (`record`: nothing ran). The message says which; `cause` is the underlying error.
 */
export class ProcessGroupStartError extends Error {
  override readonly name = 'ProcessGroupStartError';
  constructor(
    readonly stage: 'spawn' | 'record',
    cause: unknown,
  ) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    super(
      stage === 'spawn'
        ? `cannot start /bin/sh: ${detail}`
        : `could not record the process before running it: ${detail}`,
      { cause },
    );
  }
}

/**
 * The held shell: waits for one line on stdin (EOF — its parent died before releasing it — exits 125
 * without running anything), then becomes the command's shell with stdin from /dev/null (same pid).
 */
const HELD = 'IFS= read -r _ || exit 125; exec /bin/sh -c "$1" </dev/null';

/** How long to wait for the pipes to close after the shell exits (children may still be writing). */
const PIPE_DRAIN_MS = 100;
/** How long to wait for the group to die after SIGKILL before giving up. */
const KILL_WAIT_MS = 1000;
const POLL_MS = 20;

/**
 * Runs `/bin/sh -c command` as the leader of a new process group, with stdin closed. On timeout or abort the
 * whole group gets SIGTERM, then SIGKILL after the grace period, and the run ends only once the group is
 * gone. When the shell exits on its own, processes it left in the group are stopped the same way, so a
 * foreground command never leaves anything running. Resolves with the outcome (a non-zero exit, a timeout and a
 * cancellation are outcomes, not errors); rejects with {@link ProcessGroupStartError} only when the shell cannot
 * be started or (with `onStarted`) recorded.
 *
 * @example
 * ```ts
 * const run = await runInProcessGroup({ command: 'make test', cwd, timeoutMs: 60_000, signal, onOutput: (c) => out.push(c) });
 * if (run.timedOut) console.log('timed out');
 * ```
 */
export function runInProcessGroup(options: ProcessGroupRun): Promise<ProcessGroupResult> {
  const graceMs = options.killGraceMs ?? 2000;
  return new Promise((resolve, reject) => {
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
    // Aborted while the caller was still preparing: the listener above would never fire.
    if (options.signal.aborted) onAbort();
    const detach = (): void => {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
    };

    child.stdout.on('data', options.onOutput);
    child.stderr.on('data', options.onOutput);
    const pipesClosed = Promise.all([
      new Promise((done) => child.stdout.once('close', done)),
      new Promise((done) => child.stderr.once('close', done)),
    ]);

    let recordFailed: unknown;
    if (held && pid !== undefined) {
      child.stdin?.on('error', () => undefined); // the shell may be gone already (EPIPE): its exit settles the run
      const group: HeldProcessGroup = {
        spawnId: options.spawnId ?? String(pid),
        pid,
        pgid: pid,
        platform: process.platform,
        startMarker,
      };
      options.onStarted!(group).then(
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
      void stop().finally(() => reject(new ProcessGroupStartError('spawn', error)));
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
        return { exitCode, signal, timedOut, cancelled, strayProcessesStopped: strays };
      };
      settle().then((result) => {
        if (recordFailed !== undefined && !cancelled) reject(new ProcessGroupStartError('record', recordFailed));
        else resolve(result);
      }, reject);
    });
  });
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
 * init reaps late (a container's PID 1) or never, waiting for that would only stall the caller. On Linux the
 * group's members are read from /proc ({@link listProcesses}) to tell zombies apart; elsewhere any member counts.
 */
export async function groupAlive(pgid: number): Promise<boolean> {
  if (!signalGroup(pgid, 0)) return false;
  if (process.platform !== 'linux') return true;
  return (await listProcesses()).some((p) => p.pgrp === pgid && !isDead(p));
}

/** Sends `signal` to every process in the group; false when the group no longer exists. */
function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ESRCH') return false;
    if (code === 'EPERM') return true; // exists, but a member is not ours to signal
    throw error;
  }
}
