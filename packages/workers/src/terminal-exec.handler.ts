import { type ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { parseSpec } from '@demiurge/control-plane';
import type { TaskView } from '@demiurge/projector-task-board';
import { type ArtifactSink, type OpenArtifact, openArtifactFile, taskArtifactDir } from './artifact-file.js';
import { currentBootId, parseStartMarker, readProcStat, SPAWN_ID_ENV, startMarkerOf } from './process-identity.js';
import { type KillFn, scanTree, stopTree, treeAlive } from './process-tree.js';
import type { RecoverContext, RunningTask, TaskContext, TaskHandler } from './task-handler.js';
import { TerminalExecInput } from './terminal-exec.input.js';
import { TerminalRun } from './terminal-run.js';

export interface TerminalExecOptions {
  /** What a relative `cwd` (and a task without one) resolves against. Default `process.cwd()`. */
  readonly baseDir?: string;
  /** The environment a task's `env` is merged over. Default `process.env`. */
  readonly baseEnv?: NodeJS.ProcessEnv;
  /** Opens the stdout/stderr artifact files. Default {@link openArtifactFile} (mode 0600). */
  readonly openArtifact?: OpenArtifact;
  /** How signals are sent (tests count them). Default `process.kill`. */
  readonly kill?: KillFn;
  /** At most one `task.log` batch per this many ms. Default 250. */
  readonly logFlushMs?: number;
  /** Log lines longer than this are cut (the artifact keeps them whole). Default 1000. */
  readonly maxLineChars?: number;
}

/** The environment variable naming the task, next to {@link SPAWN_ID_ENV}. */
export const TASK_ID_ENV = 'DEMIURGE_TASK_ID';

const parseInput = (task: TaskView): TerminalExecInput =>
  parseSpec('terminal.exec input', TerminalExecInput, task.input ?? {}, ['input']);

/**
 * The `terminal.exec` handler: runs `command` with `args` (no shell unless `shell: true`) as the leader of its
 * own process group (`detached: true`), stdin closed, with `DEMIURGE_SPAWN_ID` (a host-issued spawn id) and
 * `DEMIURGE_TASK_ID` in its environment. It records `task.process_started { spawnId, host, pid, pgid, platform,
 * startMarker }`, streams stdout/stderr in full to `<artifactsDir>/<taskId>/stdout|stderr` (0600, dir 0700)
 * and a bounded tail to the task log, and ends with exit 0 → completed, anything else → failed (with the exit
 * code). Cancel, timeout and an output-persistence failure stop the whole verified tree (TERM, KILL after the
 * grace period, descendants included after the leader exited) before anything terminal is reported.
 *
 * @example
 * ```ts
 * const worker = new RuntimeTaskWorker({ ..., handlers: { 'terminal.exec': createTerminalExecHandler({ baseDir: workspace }) } });
 * ```
 */
export function createTerminalExecHandler(options: TerminalExecOptions = {}): TaskHandler {
  const baseDir = options.baseDir ?? process.cwd();
  const kill: KillFn = options.kill ?? ((pid, signal) => process.kill(pid, signal));
  const openArtifact = options.openArtifact ?? openArtifactFile;
  return {
    prepare(task) {
      const input = parseInput(task);
      if (input.exclusiveScope === undefined) return {};
      return { exclusiveScope: resolve(baseDir, input.cwd ?? '.', input.exclusiveScope) };
    },

    async start(ctx: TaskContext): Promise<RunningTask> {
      const input = parseInput(ctx.task);
      const { taskId } = ctx.ref;
      const dir = await taskArtifactDir(ctx.artifactsDir, taskId);
      const sinks = await openSinks(openArtifact, dir);
      const spawnId = ctx.ids.next('spn');
      const [file, args] = input.shell
        ? ['/bin/sh', ['-c', input.command, 'sh', ...input.args]]
        : [input.command, input.args];
      let child: ChildProcess;
      let startMarker: string | undefined;
      try {
        child = spawn(file, args, {
          cwd: resolve(baseDir, input.cwd ?? '.'),
          env: { ...(options.baseEnv ?? process.env), ...input.env, [SPAWN_ID_ENV]: spawnId, [TASK_ID_ENV]: taskId },
          detached: true,
          shell: false,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        // Read now, before the event loop could reap a child that exited at once.
        startMarker = child.pid === undefined ? undefined : startMarkerOf(child.pid);
        await new Promise<void>((done, fail) => {
          child.once('spawn', done);
          child.once('error', fail);
        });
      } catch (error) {
        await Promise.allSettled([sinks.stdout.close(), sinks.stderr.close()]);
        throw error;
      }
      const pid = child.pid!;
      const record = {
        spawnId,
        host: ctx.host,
        pid,
        pgid: pid, // detached: the child leads a new session and process group
        platform: process.platform,
        ...(startMarker === undefined ? {} : { startMarker }),
      };
      const run = new TerminalRun(ctx, child, record, sinks, {
        kill,
        logFlushMs: options.logFlushMs ?? 250,
        maxLineChars: options.maxLineChars ?? 1000,
        timeoutSeconds: input.timeoutSeconds,
      });
      await ctx.facts
        .processStarted(record)
        .catch((error: unknown) => run.persistFailed('recording the process', error));
      return run;
    },

    recover: (task, ctx) => recoverTerminal(task, ctx),
  };
}

/** {@link createTerminalExecHandler} with its defaults. */
export const terminalExecHandler: TaskHandler = createTerminalExecHandler();

async function openSinks(open: OpenArtifact, dir: string): Promise<Record<'stdout' | 'stderr', ArtifactSink>> {
  const stdout = await open(join(dir, 'stdout'));
  try {
    return { stdout, stderr: await open(join(dir, 'stderr')) };
  } catch (error) {
    await stdout.close().catch(() => undefined);
    throw error;
  }
}

/**
 * Settles the recorded process of a task whose owner is gone: stops its tree only when it is verifiably the
 * recorded one (start marker, or the spawn id in a member's environment); a reused pid is never signalled.
 */
async function recoverTerminal(task: TaskView, ctx: RecoverContext): Promise<string> {
  const p = task.process;
  if (!p) return 'no process was recorded for it';
  const marker = parseStartMarker(p.startMarker);
  if (!marker) return `process ${p.pid} has no start marker this host can check, so it was not signalled`;
  if (marker.bootId !== currentBootId()) {
    return `process ${p.pid} belongs to another boot (the machine restarted, or another machine); nothing was signalled`;
  }
  const scan = await scanTree(p);
  if (!treeAlive(scan)) {
    const stat = await readProcStat(p.pid);
    return stat && stat.state !== 'Z'
      ? `pid ${p.pid} now belongs to another process (its start marker differs), so it was not signalled`
      : `its process group ${p.pgid} had already exited`;
  }
  const stop = await stopTree(p, { graceMs: ctx.graceMs, kill: ctx.kill });
  const how = stop.finalSignal === 'SIGKILL' ? `SIGKILL after ${ctx.graceMs} ms of SIGTERM` : 'SIGTERM';
  const left = stop.survivors.length > 0 ? `; still running: pids ${stop.survivors.join(', ')}` : '';
  return `its orphaned process group ${p.pgid} was stopped with ${how}${left}`;
}
