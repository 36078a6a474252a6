import type { RecordedEvent } from '@demiurge/contracts';
import type { Projector } from '@demiurge/event-store';
import type { LogStatements } from './event-rows.js';
import type { ProjectorRunner } from './projector-runner.js';

/** How far the asynchronous projectors were behind the log, as measured by the store. */
export interface ProjectionLag {
  /** The asynchronous projectors (`mode: 'async'`). */
  readonly projectors: readonly string[];
  /** Events of their types committed by this store and not yet applied. */
  readonly pendingEvents: number;
  /**
   * The longest time (ms) an event of their types waited between its commit and its application, since open
   * or the last `projectionLag({ reset: true })`. It includes any time the event loop was blocked by others.
   */
  readonly maxLagMs: number;
  /** Catch-up transactions of their own (a timer, a read, close) and catch-ups inside a group commit. */
  readonly ownTransactions: number;
  readonly inGroupCommits: number;
}

/** What the asynchronous projectors need from their store. */
export interface AsyncProjectionDeps {
  readonly projections: ProjectorRunner;
  readonly stmts: LogStatements;
  /** Runs `work` in a `BEGIN IMMEDIATE` transaction. */
  transaction<T>(work: () => T): T;
  /** Whether a transaction of its own may start now (open, not damaged, no rebuild holding the writer). */
  canRun(): boolean;
  /** Appends are queued or committing: the next commit will apply what is due, no transaction of its own. */
  writerBusy(): boolean;
  /** Target lag: a timer catches up this long after the first unapplied event's commit. */
  readonly lagMs: number;
}

/** The events this store committed past a position, of the asynchronous projectors' types. */
interface Known {
  /** Every event in (from, through] of their types is in `events`. */
  from: number;
  through: number;
  events: RecordedEvent[];
}

/** A batch this large is applied at the next commit, however young. */
const MAX_PENDING = 4096;

/**
 * Asynchronous projectors (`mode: 'async'`): read models that only serve people, applied after the commit
 * instead of inside it, with a bounded lag.
 *
 * The events this store commits are kept in memory (they need no re-read, no decoding); they are applied,
 * in position order, through the batch's held documents (so a counter moved by a hundred claims is written
 * once), either inside a later group commit once the oldest waited a quarter of the target lag (no extra
 * commit), or in a transaction of their own when a timer fires after the target lag and no append is queued,
 * at a read, and at close. After
 * another process's commits (a gap in the positions) they catch up from the log by position instead.
 * Checkpointed like the inline ones: a crash before they were applied leaves them behind, and the next open
 * catches them up from the log.
 */
export class AsyncProjections {
  readonly projectors: readonly Projector[];
  private readonly handled: ReadonlySet<string>;
  private known: Known = { from: 0, through: 0, events: [] };
  /** The position every asynchronous projector is known to include (applied, or none of its events since). */
  private appliedThrough = 0;
  /** `performance.now()` at the commit of the oldest event not yet applied. */
  private oldestPendingAt: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private maxLagMs = 0;
  private ownTransactions = 0;
  private inGroupCommits = 0;
  /** The last failure of an asynchronous projector; reads throw it until a catch-up succeeds. */
  private failure: unknown;

  constructor(private readonly deps: AsyncProjectionDeps) {
    this.projectors = deps.projections.async;
    this.handled = new Set(this.projectors.flatMap((p) => p.handles));
  }

  get enabled(): boolean {
    return this.projectors.length > 0;
  }

  /** At open, once every projector reached `head`. */
  start(head: number): void {
    this.known = { from: head, through: head, events: [] };
    this.appliedThrough = head;
  }

  /** This store committed `events` (contiguous positions, in order). */
  committed(events: readonly RecordedEvent[]): void {
    if (!this.enabled || events.length === 0) return;
    const first = events[0]!.position;
    const last = events[events.length - 1]!.position;
    const mine = events.filter((e) => this.handled.has(e.type));
    const current = this.appliedThrough >= this.known.through && this.known.events.length === 0;
    if (first === this.known.through + 1) {
      this.known.through = last;
      for (const e of mine) this.known.events.push(e);
    } else {
      // Another process committed in between: what lies in the gap is read from the log at the catch-up.
      this.known = { from: first - 1, through: last, events: mine };
    }
    if (mine.length === 0 && current && first === this.appliedThrough + 1) {
      this.appliedThrough = last;
      return;
    }
    // Held back too long (a failing projector, a blocked loop): stop holding, the catch-up reads the log.
    if (this.known.events.length > 4 * MAX_PENDING) this.known = { from: last, through: last, events: [] };
    this.oldestPendingAt ??= performance.now();
    this.arm();
  }

  /**
   * Inside a group commit, after its appends: applies what earlier commits left once the oldest waited a
   * quarter of the target lag (or much is waiting). Returns the position applied through, to be recorded with
   * {@link applied} once the transaction committed; undefined when nothing was due or it needs the log.
   */
  applyDueInTx(): number | undefined {
    if (this.oldestPendingAt === undefined || this.failure !== undefined) return undefined;
    const age = performance.now() - this.oldestPendingAt;
    if (age < this.deps.lagMs / 4 && this.known.events.length < MAX_PENDING) return undefined;
    if (this.appliedThrough < this.known.from) return undefined;
    const { savepoint, release, rollbackTo } = this.deps.stmts;
    const { overlay } = this.deps.projections;
    savepoint.run();
    overlay.mark();
    try {
      const through = this.applyKnown();
      release.run();
      if (through !== undefined) this.inGroupCommits++;
      return through;
    } catch (err) {
      rollbackTo.run();
      release.run();
      overlay.rollbackToMark();
      this.failure = err;
      return undefined;
    }
  }

  /** A transaction that applied through `position` committed. */
  applied(position: number): void {
    if (position <= this.appliedThrough) return;
    this.appliedThrough = position;
    this.known.events = this.known.events.filter((e) => e.position > position);
    if (this.known.through < position) this.known = { from: position, through: position, events: [] };
    // None of their events lies past `position` up to the end of what is known: they include all of it.
    if (this.known.events.length === 0 && this.known.from <= position) this.appliedThrough = this.known.through;
    if (this.known.events.length === 0 && this.oldestPendingAt !== undefined) {
      this.maxLagMs = Math.max(this.maxLagMs, performance.now() - this.oldestPendingAt);
      this.oldestPendingAt = undefined;
    }
  }

  /**
   * Brings the asynchronous projectors to the head now, in a transaction of their own (a read, close):
   * nothing when they are current. Throws the projector's failure.
   */
  catchUp(): void {
    if (!this.enabled) return;
    if (this.failure === undefined && this.appliedThrough >= this.deps.stmts.head.get()!) return;
    this.runOwn();
    if (this.failure !== undefined) throw this.failure;
  }

  /**
   * At close: brings them to the head like {@link catchUp}, and also moves a stored checkpoint that lags
   * behind the head though nothing is left to apply (the last commits held none of their events: in memory
   * they are current, and no transaction wrote their checkpoints), so the file says they are at the head.
   */
  settle(): void {
    if (!this.enabled) return;
    const head = this.deps.stmts.head.get()!;
    if (this.failure === undefined && this.appliedThrough >= head) {
      const cps = this.deps.projections.readCheckpoints();
      if (this.projectors.every((p) => (cps.get(p.name)?.position ?? 0) >= head)) return;
    }
    this.runOwn();
    if (this.failure !== undefined) throw this.failure;
  }

  /** Stops the timer (the store closes). */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  lag(reset = false): ProjectionLag {
    const lag = {
      projectors: this.projectors.map((p) => p.name),
      pendingEvents: this.known.events.length,
      maxLagMs: this.maxLagMs,
      ownTransactions: this.ownTransactions,
      inGroupCommits: this.inGroupCommits,
    };
    if (reset) this.maxLagMs = 0;
    return lag;
  }

  private arm(): void {
    if (this.timer || this.oldestPendingAt === undefined) return;
    const wait = Math.max(1, this.deps.lagMs - (performance.now() - this.oldestPendingAt));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.oldestPendingAt === undefined || this.failure !== undefined) return;
      if (performance.now() - this.oldestPendingAt < this.deps.lagMs) return this.arm();
      // A busy writer applies it in its next commit, unless it must be read from the log (another process wrote).
      const fromLog = this.appliedThrough < this.known.from;
      if (!this.deps.canRun() || (this.deps.writerBusy() && !fromLog)) {
        return void setTimeout(() => this.arm(), this.deps.lagMs / 4).unref();
      }
      this.runOwn();
    }, wait);
    this.timer.unref();
  }

  /** One transaction (a few when the log must be read): applies what is known, or catches up from the log. */
  private runOwn(): void {
    if (!this.deps.canRun()) return;
    this.failure = undefined;
    const { overlay } = this.deps.projections;
    try {
      for (;;) {
        // The documents are held and written once, just before the commit (see DocumentOverlay).
        const { through, done } = this.deps.transaction(() => {
          overlay.begin();
          const step = this.applyInOwnTx();
          overlay.flush();
          return step;
        });
        overlay.end();
        this.ownTransactions++;
        this.applied(through);
        if (done) break;
      }
    } catch (err) {
      overlay.end();
      this.failure = err;
    }
  }

  private applyInOwnTx(): { through: number; done: boolean } {
    const fromMemory = this.applyKnown();
    if (fromMemory !== undefined) {
      const head = this.deps.stmts.head.get()!;
      if (fromMemory >= head) return { through: fromMemory, done: true };
    }
    const step = this.deps.projections.catchUp(this.projectors, 2000);
    return { through: step.position, done: step.done };
  }

  /**
   * Applies the known events past each projector's checkpoint and moves the checkpoints to the end of what is
   * known, or returns undefined when a checkpoint lies before the known range (read the log instead).
   */
  private applyKnown(): number | undefined {
    const cps = this.deps.projections.readCheckpoints();
    const at = (p: Projector) => cps.get(p.name)?.position ?? 0;
    if (this.projectors.some((p) => at(p) < this.known.from || cps.get(p.name)?.version !== p.version)) {
      return undefined;
    }
    const through = this.known.through;
    this.deps.projections.applyTo(this.projectors, this.known.events, at);
    for (const p of this.projectors) if (at(p) < through) this.deps.stmts.setCheckpoint.run(through, p.name);
    return through;
  }
}
