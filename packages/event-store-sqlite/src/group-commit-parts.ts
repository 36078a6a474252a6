import type { EventRegistry, RecordedEvent } from '@demiurge/contracts';
import type { AppendResult } from '@demiurge/event-store';
import type { AppendPlan } from '@demiurge/event-store/adapter';
import type { AsyncProjections } from './async-projections.js';
import type { LogStatements } from './event-rows.js';
import type { LogPublisher } from './log-publisher.js';
import type { ProjectorRunner } from './projector-runner.js';
import type { CommitHook } from './sqlite-store-options.js';
import type { StreamCache } from './stream-cache.js';

// The group-commit writer's parts: what it needs from its store, a queued append and its outcome.

export interface PendingAppend {
  readonly plan: AppendPlan;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

export type Outcome = { ok: true; value: AppendResult } | { ok: false; error: unknown };

/** How a batch's appends are kept apart: one append alone, optimistic (no savepoints), a savepoint each. */
export type Isolation = 'none' | 'optimistic' | 'savepoints';

/** An optimistic batch met an append that failed after it began writing: rerun it with savepoints. */
export class FailedWhileWriting extends Error {
  constructor(cause: unknown) {
    super('an append failed after it began writing', { cause });
  }
}

/** What the group-commit writer needs from its store. */
export interface GroupCommitDeps {
  readonly stmts: LogStatements;
  readonly registry: EventRegistry;
  readonly projections: ProjectorRunner;
  /** The asynchronous projectors: told of each commit, and applied inside one when due. */
  readonly async: AsyncProjections;
  /** The streams this store read or wrote lately: extended by each commit. */
  readonly streams: StreamCache;
  readonly publisher: LogPublisher;
  /** How long a locked database is retried before `StoreBusyError`. */
  readonly busyRetryMs: number;
  /** Always flush on the next turn of the event loop (no timing-dependent microtask shortcut). */
  readonly deterministicFlush?: boolean;
  /** Runs `work` in one `BEGIN IMMEDIATE` transaction. */
  transaction<T>(work: () => T): T;
  /** The error a caller gets for `err`, stopping the store on corruption. */
  failStop(err: unknown): unknown;
  /** The store's fail-stop error once it stopped. */
  damaged(): unknown;
  /** The test hook told before and after each commit that appends events (crash-point sweeps). */
  readonly onCommit?: CommitHook | undefined;
}

/** The events a batch's outcomes committed (replays and refusals hold none), in position order. */
export function committedEvents(outcomes: readonly Outcome[]): RecordedEvent[] {
  const events: RecordedEvent[] = [];
  for (const o of outcomes) if (o.ok && !o.value.replayed) for (const e of o.value.events) events.push(e);
  return events;
}

/** Tells the commit hook of a commit that appended events (one that only replayed or refused is no commit of the log). */
export function tellCommit(hook: CommitHook, phase: 'before' | 'after', outcomes: readonly Outcome[]): void {
  const events = committedEvents(outcomes);
  if (events.length > 0) hook(phase, events);
}

export function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}
