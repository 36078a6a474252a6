import { closeSync, openSync, writeSync } from 'node:fs';
import type { CommitHook, CommitPhase } from '@demiurge/event-store-sqlite';
import type { TurnEngine } from '@demiurge/turn-engine';
import { ConfigError } from '../config.js';

/** `<n>:<before|after>`: the host SIGKILLs itself right before or right after its n-th commit (1-based). */
export const CRASH_AT_COMMIT_ENV = 'DEMIURGE_CRASH_AT_COMMIT';
/** A file the host appends one JSON line to per commit ({@link CommitTraceLine}), and one at its crash. */
export const COMMIT_TRACE_ENV = 'DEMIURGE_COMMIT_TRACE';
/** A deliberately injected bug, for tests that prove a checker can fail: `ack-before-commit`. */
export const INJECT_BUG_ENV = 'DEMIURGE_INJECT_BUG';

/**
 * The injected bugs: `ack-before-commit` answers a submit with its ids before the commit that admits the turn
 * (the commit follows 25 ms later). A host must never run with one outside a test.
 */
export type InjectedBug = 'ack-before-commit';
const INJECTED_BUGS: readonly InjectedBug[] = ['ack-before-commit'];

/** One line of the commit trace: the n-th commit of this host process, its positions and event types. */
export interface CommitTraceLine {
  readonly commit: number;
  readonly phase: CommitPhase;
  readonly first: number;
  readonly last: number;
  readonly types: readonly string[];
  /** Present on the line written right before the host kills itself at this point. */
  readonly crash?: true;
}

/** The crash-testing hooks a host start reads from its environment; all absent by default. */
export interface HostTestHooks {
  /** The store's commit hook (SQLite only): traces and crashes at the configured commit. */
  readonly onCommit?: CommitHook;
  readonly injectedBug?: InjectedBug;
}

/**
 * Reads {@link CRASH_AT_COMMIT_ENV}, {@link COMMIT_TRACE_ENV} and {@link INJECT_BUG_ENV}. A bad value is a
 * {@link ConfigError} naming the variable. Nothing set: no hook at all (the store's commit path is unchanged).
 * The variables are removed from `process.env` once read, so the host's own child processes do not inherit them.
 * @example
 * hostTestHooks({ DEMIURGE_CRASH_AT_COMMIT: '7:before' }).onCommit; // SIGKILLs the host before its 7th commit
 */
export function hostTestHooks(env: NodeJS.ProcessEnv): HostTestHooks {
  const crashValue = env[CRASH_AT_COMMIT_ENV];
  const tracePath = env[COMMIT_TRACE_ENV];
  const bugValue = env[INJECT_BUG_ENV];
  if (env === process.env) {
    delete process.env[CRASH_AT_COMMIT_ENV];
    delete process.env[COMMIT_TRACE_ENV];
    delete process.env[INJECT_BUG_ENV];
  }
  let injectedBug: InjectedBug | undefined;
  if (bugValue) {
    injectedBug = INJECTED_BUGS.find((b) => b === bugValue);
    if (!injectedBug) {
      throw new ConfigError(
        'environment',
        INJECT_BUG_ENV,
        `unknown bug "${bugValue}" (known: ${INJECTED_BUGS.join(', ')})`,
      );
    }
  }
  const crashAt = crashValue ? parseCrashAt(crashValue) : undefined;
  if (!crashAt && !tracePath) return injectedBug ? { injectedBug } : {};
  const fd = tracePath ? openSync(tracePath, 'a') : undefined;
  const write = (line: CommitTraceLine) => {
    if (fd !== undefined) writeSync(fd, `${JSON.stringify(line)}\n`);
  };
  let commits = 0;
  const onCommit: CommitHook = (phase, events) => {
    if (phase === 'before') commits++;
    const line: CommitTraceLine = {
      commit: commits,
      phase,
      first: events[0]!.position,
      last: events[events.length - 1]!.position,
      types: events.map((e) => e.type),
    };
    if (crashAt && crashAt.commit === commits && crashAt.phase === phase) {
      write({ ...line, crash: true });
      if (fd !== undefined) closeSync(fd);
      // A real crash: no close, no rollback, no answer to anyone. SIGKILL to itself is delivered at once.
      process.kill(process.pid, 'SIGKILL');
    }
    if (phase === 'after') write(line);
  };
  return { onCommit, ...(injectedBug ? { injectedBug } : {}) };
}

function parseCrashAt(value: string): { commit: number; phase: CommitPhase } {
  const match = /^([1-9]\d*):(before|after)$/.exec(value.trim());
  if (!match) {
    throw new ConfigError('environment', CRASH_AT_COMMIT_ENV, `"${value}" is not <n>:<before|after> (e.g. 7:before)`);
  }
  return { commit: Number(match[1]), phase: match[2] as CommitPhase };
}

/**
 * Injects the `ack-before-commit` bug into a turn engine: `startTurn` resolves `admitted` at once with the
 * caller's ids and admits the turn (its commit) 25 ms later, so a submit is answered before it is committed
 * and a crash in between loses a turn the client was told about.
 */
export function injectAckBeforeCommit(engine: TurnEngine): void {
  const startTurn = engine.startTurn.bind(engine);
  engine.startTurn = (input) => {
    const { runId, turnId } = input;
    if (!runId || !turnId) return startTurn(input);
    const started = new Promise((resolve) => setTimeout(resolve, 25)).then(() => startTurn(input));
    const outcome = started.then((turn) => turn.outcome);
    return { admitted: Promise.resolve({ sessionId: input.sessionId, runId, turnId }), outcome };
  };
}
