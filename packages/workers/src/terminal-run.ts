import type { ChildProcess } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { IdPrefix } from '@demiurge/contracts';
import type { ArtifactSink } from './artifact-file.js';
import { cleanupErrorOf, describeCleanupError } from './cleanup-error.js';
import { LogTail, type TailLine, TRUNCATION_MARK } from './log-tail.js';
import type { ProcessRecord } from './process-identity.js';
import { type KillFn, type StopReport, stopTree } from './process-tree.js';
import type { RunningTask, TaskContext, TaskOutcome } from './task-handler.js';

type Stream = 'stdout' | 'stderr';

/** Why a run ends: the first trigger wins, every later one gets the same outcome. */
type Ending =
  | { readonly kind: 'exit' }
  | { readonly kind: 'cancel'; readonly reason: string }
  | { readonly kind: 'timeout'; readonly seconds: number }
  | { readonly kind: 'persist'; readonly what: string; readonly error: unknown };

export interface TerminalRunOptions {
  readonly kill: KillFn;
  readonly logFlushMs: number;
  readonly maxLineChars: number;
  readonly timeoutSeconds: number | undefined;
}

/** How long to wait for the pipes to close once the tree is dead (something that left the tree may hold them). */
const PIPE_CLOSE_MS = 1000;

/**
 * One live `terminal.exec` process tree: streams its output to the artifact sinks (in order, with
 * backpressure) and to a rate-limited log tail, and ends exactly once — by itself, on cancel, on timeout or
 * when output cannot be persisted — always the same way: stop the verified tree, close the artifacts, record
 * the last log batch and the artifacts, then report the outcome for the worker to commit.
 */
export class TerminalRun implements RunningTask {
  readonly finished: Promise<TaskOutcome>;
  private resolveFinished!: (outcome: TaskOutcome) => void;
  private ending: Promise<TaskOutcome> | undefined;
  private persistFailure: { what: string; error: unknown } | undefined;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private readonly exited: Promise<void>;
  private readonly closed: Promise<void>;
  private readonly tail: LogTail;
  private flushTimer: NodeJS.Timeout | undefined;
  private timeoutTimer: NodeJS.Timeout | undefined;
  private discarding = false;

  constructor(
    private readonly ctx: TaskContext,
    private readonly child: ChildProcess,
    readonly record: ProcessRecord,
    private readonly sinks: Readonly<Record<Stream, ArtifactSink>>,
    private readonly options: TerminalRunOptions,
  ) {
    this.finished = new Promise((resolve) => {
      this.resolveFinished = resolve;
    });
    this.tail = new LogTail({ lines: ctx.logTailLines, maxLineChars: options.maxLineChars });
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve();
      }),
    );
    this.closed = new Promise((resolve) => child.once('close', () => resolve()));
    child.on('error', (error) => this.persistFailed('watching the process', error));
    for (const name of ['stdout', 'stderr'] as const) {
      const stream = child[name];
      stream?.on('data', (chunk: Buffer) => this.onData(name, chunk));
    }
    void this.closed.then(() => this.end({ kind: 'exit' }));
    if (options.timeoutSeconds !== undefined) {
      const seconds = options.timeoutSeconds;
      this.timeoutTimer = setTimeout(() => void this.end({ kind: 'timeout', seconds }), seconds * 1000);
    }
  }

  stop(reason: string): Promise<TaskOutcome> {
    return this.end({ kind: 'cancel', reason });
  }

  /** Called when recording the process failed: the tree is stopped and the task fails. */
  persistFailed(what: string, error: unknown): void {
    this.persistFailure ??= { what, error };
    this.discarding = true;
    this.child.stdout?.resume();
    this.child.stderr?.resume();
    void this.end({ kind: 'persist', what, error });
  }

  private onData(name: Stream, chunk: Buffer): void {
    if (this.discarding) return;
    this.tail.push(name, chunk);
    this.scheduleFlush();
    const stream = this.child[name];
    stream?.pause();
    this.sinks[name].write(chunk).then(
      () => stream?.resume(),
      (error: unknown) => this.persistFailed(`writing ${name} to ${this.sinks[name].path}`, error),
    );
  }

  private scheduleFlush(): void {
    if (this.flushTimer !== undefined || this.ending !== undefined) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      const lines = this.tail.take();
      if (lines.length > 0) {
        this.ctx.facts.log(lines).catch((error: unknown) => this.persistFailed('recording the log tail', error));
      }
    }, this.options.logFlushMs);
  }

  private end(ending: Ending): Promise<TaskOutcome> {
    this.ending ??= this.finish(ending)
      .catch((error: unknown): TaskOutcome => {
        // The cleanup failed (e.g. the tree could not be signalled): the task still ends at once, saying so.
        this.discarding = true;
        this.child.stdout?.resume();
        this.child.stderr?.resume();
        clearTimeout(this.flushTimer);
        const cleanupError = cleanupErrorOf(error);
        if (ending.kind === 'cancel') {
          return {
            status: 'cancelled',
            reason: `${ending.reason} (${describeCleanupError(cleanupError)})`,
            cleanupError,
          };
        }
        return {
          status: 'failed',
          error: {
            code: 'cleanup_failed',
            message: `stopping the process tree failed: ${cleanupError.type}: ${cleanupError.message}`,
          },
        };
      })
      .then((outcome) => {
        this.resolveFinished(outcome);
        return outcome;
      });
    return this.ending;
  }

  private async finish(ending: Ending): Promise<TaskOutcome> {
    clearTimeout(this.timeoutTimer);
    // Stop whatever of the tree still runs: everything on cancel/timeout/persist failure, and on a natural
    // end the processes the command left behind (they hold no pipe, but nothing may run without an owner).
    let stop = await stopTree(this.record, { graceMs: this.ctx.graceMs, kill: this.options.kill });
    if (!stop.signalled && this.exit === undefined && this.record.startMarker === undefined) {
      stop = await this.stopByHandle(); // no start marker on this platform: the unreaped child handle is the proof
    }
    await Promise.race([Promise.all([this.exited, this.closed]), delay(PIPE_CLOSE_MS)]);
    this.child.stdout?.destroy();
    this.child.stderr?.destroy();
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;

    const artifacts = await this.closeSinks();
    this.tail.end();
    const lines: TailLine[] = this.tail.take();
    if (this.tail.truncated) lines.push({ stream: 'progress', text: this.truncationSummary(artifacts) });
    await this.recordFact('recording the log tail', () => this.ctx.facts.log(lines));
    for (const [name, written] of artifacts) {
      if (!written) continue;
      await this.recordFact(`recording the ${name} artifact`, () =>
        this.ctx.facts.artifactRecorded({
          artifactId: this.ctx.ids.next(IdPrefix.artifact),
          name,
          path: this.sinks[name].path,
          bytes: written.bytes,
          sha256: written.sha256,
        }),
      );
    }
    await this.ctx.facts.settled();
    return this.outcome(ending, stop);
  }

  private async stopByHandle(): Promise<StopReport> {
    const pgid = this.record.pgid;
    const signal = (s: NodeJS.Signals) => {
      try {
        this.options.kill(-pgid, s);
      } catch {
        // ESRCH: already gone
      }
    };
    signal('SIGTERM');
    const dead = await Promise.race([this.exited.then(() => true), delay(this.ctx.graceMs).then(() => false)]);
    if (dead) return { signalled: true, finalSignal: 'SIGTERM', survivors: [] };
    signal('SIGKILL');
    return { signalled: true, finalSignal: 'SIGKILL', survivors: [] };
  }

  private async recordFact(what: string, write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (error) {
      this.persistFailure ??= { what, error };
    }
  }

  /** Closes both sinks; a sink whose write or close failed is not recorded (its file is incomplete). */
  private async closeSinks(): Promise<[Stream, { bytes: number; sha256: string } | undefined][]> {
    const out: [Stream, { bytes: number; sha256: string } | undefined][] = [];
    for (const name of ['stdout', 'stderr'] as const) {
      const failedHere = this.persistFailure?.what.startsWith(`writing ${name}`) ?? false;
      try {
        const written = await this.sinks[name].close();
        out.push([name, failedHere ? undefined : written]);
      } catch (error) {
        this.persistFailure ??= { what: `closing ${this.sinks[name].path}`, error };
        out.push([name, undefined]);
      }
    }
    return out;
  }

  private truncationSummary(artifacts: [Stream, { bytes: number } | undefined][]): string {
    const sizes = artifacts.map(([name, w]) => `${name} ${w ? `${w.bytes} bytes` : 'not recorded'}`).join(', ');
    const cut = this.tail.cut > 0 ? `, ${this.tail.cut} long lines cut` : '';
    return `${TRUNCATION_MARK}: ${this.tail.omitted} of ${this.tail.lines} output lines omitted${cut}; full output in the artifacts (${sizes})]`;
  }

  private outcome(ending: Ending, stop: StopReport): TaskOutcome {
    const exitCode = this.exit?.code ?? undefined;
    const code = exitCode === undefined ? {} : { exitCode };
    const what = describeEnd(this.exit, stop, this.ctx.graceMs);
    if (this.persistFailure) {
      const { what: doing, error } = this.persistFailure;
      return {
        status: 'failed',
        error: { code: 'output_persistence_failed', message: `${doing} failed: ${message(error)}; ${what}` },
        ...code,
      };
    }
    switch (ending.kind) {
      case 'cancel':
        return { status: 'cancelled', reason: `${ending.reason} (${what})` };
      case 'timeout':
        return {
          status: 'failed',
          error: { code: 'timed_out', message: `ran longer than ${ending.seconds} s; ${what}` },
          ...code,
        };
      case 'persist':
      case 'exit':
        break;
    }
    const strays = stop.signalled
      ? `; processes it left running were stopped (${describeStop(stop, this.ctx.graceMs)})`
      : '';
    if (this.exit?.code === 0) return { status: 'completed', exitCode: 0, summary: `exit code 0${strays}` };
    const error =
      this.exit?.signal != null
        ? { code: 'killed_by_signal', message: `the process ended by ${this.exit.signal}${strays}` }
        : { code: 'exit_status', message: `the process exited with code ${exitCode ?? 'unknown'}${strays}` };
    return { status: 'failed', error, ...code };
  }
}

/** `exit code 0; process tree stopped with SIGTERM`, for reasons and failure messages. */
export function describeEnd(
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined,
  stop: StopReport,
  graceMs: number,
): string {
  const parts = [
    exit === undefined ? 'no exit status' : exit.signal ? `exit signal ${exit.signal}` : `exit code ${exit.code}`,
  ];
  if (stop.signalled) parts.push(describeStop(stop, graceMs));
  return parts.join('; ');
}

function describeStop(stop: StopReport, graceMs: number): string {
  const how =
    stop.finalSignal === 'SIGKILL'
      ? `process tree killed with SIGKILL after ${graceMs} ms of SIGTERM`
      : 'process tree stopped with SIGTERM';
  return stop.survivors.length > 0 ? `${how}; still running: pids ${stop.survivors.join(', ')}` : how;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
