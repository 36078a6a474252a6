import { type Actor, asDomainEvent } from '@demiurge/contracts';
import { runsReader } from '@demiurge/projector-runs';
import type { RunLease } from '@demiurge/sessions';
import { admit } from './engine/admission.js';
import { Cancellation, EngineClosingError } from './engine/cancellation.js';
import { type CompactionResult, compactSessionNow } from './engine/compaction.js';
import { TurnExecution } from './engine/execution.js';
import { stderrLogger } from './engine/logger.js';
import type {
  AdmittedTurn,
  EngineDeps,
  StartedTurn,
  TurnEngineOptions,
  TurnInput,
  TurnOutcome,
} from './engine/options.js';
import { runLoop } from './engine/turn-loop.js';
import type { TurnPin } from './turn-state.js';

export { EngineClosingError } from './engine/cancellation.js';
export {
  COMPACTION_INSTRUCTIONS,
  type CompactionResult,
  DEFAULT_COMPACT_AT,
  DEFAULT_KEEP_MESSAGES,
  NothingToCompactError,
} from './engine/compaction.js';
export type { TurnEngineLogger } from './engine/logger.js';
export type {
  AdmittedTurn,
  StartedTurn,
  TurnEngineOptions,
  TurnHooks,
  TurnInput,
  TurnNotices,
  TurnOutcome,
} from './engine/options.js';

/**
 * The foreground provider/tool loop for one turn (seed 003 TurnEngine). Every fact is an event committed
 * before anything acts on it: the user input with the turn and run, each model round whole
 * (`turn.model_responded`, with its tool calls requested and a run checkpoint), each tool call started
 * before it runs and settled after. {@link resume} rebuilds a turn from the log alone, so a new owner
 * continues where the log says: a recorded model round is never requested again, a started call
 * without an outcome becomes `unknown` and is never re-run.
 *
 * The class holds what is live in this process (drives, their cancellations, closing); the modules under
 * `engine/` do the work: admission, the pure `nextStep` decision, the loop, tool dispatch, the approval and
 * pause waits, the endings.
 */
export class TurnEngine {
  readonly stepBudget: number;
  private readonly deps: EngineDeps;
  /** The cancellation and session of each run this engine drives now. */
  private readonly live = new Map<string, { readonly cancellation: Cancellation; readonly sessionId: string }>();
  private readonly drives = new Set<Promise<unknown>>();
  /** The drive of each run this engine is executing (a paused one included: it waits at its boundary). */
  private readonly driving = new Map<string, Promise<TurnOutcome>>();
  private closing = false;

  constructor(options: TurnEngineOptions) {
    this.stepBudget = options.stepBudget ?? 90;
    this.deps = { ...options, stepBudget: this.stepBudget, logger: options.logger ?? stderrLogger };
  }

  /** Admits a user input (one turn at a time per session) and runs its turn to an outcome. */
  runTurn(input: TurnInput): Promise<TurnOutcome> {
    return this.startTurn(input).outcome;
  }

  /**
   * Admits a user input (one turn at a time per session) and runs its turn: `admitted` resolves once the input,
   * run and turn are committed (their ids are the caller's `runId`/`turnId` when it gave them), `outcome` when
   * the turn ends.
   * @example
   * const { admitted, outcome } = engine.startTurn({ sessionId, text: 'hi', runId, turnId });
   * await admitted; // committed: the run can be cancelled, the turn watched
   */
  startTurn(input: TurnInput): StartedTurn {
    let admittedAs!: (ids: AdmittedTurn) => void;
    let notAdmitted!: (error: unknown) => void;
    const admitted = new Promise<AdmittedTurn>((resolve, reject) => {
      admittedAs = resolve;
      notAdmitted = reject;
    });
    const outcome = this.admitAndRun(input, admittedAs);
    outcome.then(
      () => notAdmitted(new Error('the turn ended without being admitted')),
      (err: unknown) => notAdmitted(err),
    );
    // Not swallowed: the same failure rejects `outcome`, which every caller holds (runTurn returns only it).
    admitted.catch(() => undefined);
    return { admitted, outcome };
  }

  private async admitAndRun(input: TurnInput, admitted: (ids: AdmittedTurn) => void): Promise<TurnOutcome> {
    if (this.closing) throw new EngineClosingError();
    const opening = input.session?.open !== undefined;
    const busyMode = opening ? 'queue' : (await this.deps.sessions.get(input.sessionId)).busyMode;
    const interrupt =
      busyMode === 'interrupt'
        ? async () => {
            for (const [runId, live] of this.live) {
              if (live.sessionId !== input.sessionId) continue;
              await this.deps.runs.requestCancel(runId, 'interrupted by a new input');
              live.cancellation.stop({ kind: 'cancel_requested' });
            }
          }
        : undefined;
    return this.deps.admission.run(input.sessionId, () => this.start(input, admitted), interrupt);
  }

  /**
   * Continues a run from the log (after a restart, a lease expiry, a pause or an approval): claims
   * ownership when this host does not hold it, then drives the run's current turn.
   */
  async resume(runId: string, lease?: RunLease, options: { ownerDead?: boolean } = {}): Promise<TurnOutcome> {
    if (this.closing) throw new EngineClosingError();
    const driving = this.driving.get(runId);
    if (driving) return driving; // this engine executes it already (e.g. waiting at a pause): the same outcome
    const turnId = await this.currentTurnId(runId);
    if (turnId && this.deps.hooks?.resumable) await this.deps.hooks.resumable(await this.pinOf(turnId));
    const owned = lease ?? (await this.deps.runs.claimOwnership(runId, options));
    const run = await this.deps.runs.get(runId);
    if (!run.sessionId || !turnId) throw new Error(`run ${runId} has no turn to resume`);
    const sessionId = run.sessionId;
    return this.deps.admission.run(sessionId, () =>
      this.drive(owned, sessionId, (cancellation) => TurnExecution.load(this.deps, owned, turnId, cancellation)),
    );
  }

  /**
   * A completion turn: admits a turn whose input is the session's pending task notices (one turn at a time
   * per session, after any input already waiting), acknowledging them in the admission's commit. Resolves
   * undefined, admitting nothing, when no notice is pending by then (an earlier input took them).
   */
  async runNoticeTurn(input: Omit<TurnInput, 'text'>): Promise<TurnOutcome | undefined> {
    if (this.closing) throw new EngineClosingError();
    return this.deps.admission.run(input.sessionId, () => this.start({ ...input, text: '' }, () => undefined, true));
  }

  /**
   * Compacts a session's model context now (manual: `demiurge sessions compact`, `/compact`): after the turn this
   * engine runs for the session, if any (one turn or compaction at a time per session), the model summarizes
   * the older messages and `session.compacted` is committed. Throws `NothingToCompactError` when nothing older
   * than the kept messages is left.
   * @example
   * const { compactionId, messageCount } = await engine.compact(sessionId);
   */
  async compact(sessionId: string, options: { actor?: Actor } = {}): Promise<CompactionResult> {
    if (this.closing) throw new EngineClosingError();
    await this.deps.sessions.get(sessionId);
    return this.deps.admission.run(sessionId, () => compactSessionNow(this.deps, sessionId, options));
  }

  /** Whether a turn of the session runs or waits for admission in this engine. */
  isBusy(sessionId: string): boolean {
    return this.deps.admission.isBusy(sessionId);
  }

  /** Runs this engine is driving now. */
  liveRuns(): string[] {
    return [...this.live.keys()];
  }

  /**
   * Closes admission (new turns and resumes are refused), lets running turns finish for up to `drainMs`,
   * then stops the rest: an in-flight tool call is settled as cancelled, and the run's owner lease is
   * released (`run.owner_lease_expired`) so the next host start resumes it at once.
   */
  async close(options: { drainMs?: number } = {}): Promise<void> {
    this.closing = true;
    const drained = Promise.allSettled([...this.drives]);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([drained, new Promise((r) => (timer = setTimeout(r, options.drainMs ?? 5_000)))]);
    clearTimeout(timer);
    for (const live of this.live.values()) live.cancellation.stop({ kind: 'host_closing' });
    await Promise.allSettled([...this.drives]);
  }

  /**
   * Requests cancellation; the owner (this process or another) settles and ends the run. `by`, the principal
   * asking, is checked against the run's owner (`RunNotOwnedError`) and recorded as the actor.
   */
  async cancel(runId: string, reason: string, by?: Actor): Promise<void> {
    await this.deps.runs.requestCancel(runId, reason, by);
    this.live.get(runId)?.cancellation.stop({ kind: 'cancel_requested' });
  }

  /**
   * Pauses at the next step boundary: the step under way (a model round, a running tool call) finishes and is
   * recorded, then the owner waits, keeping its lease, until `run.resumed` (from any process: the log is
   * watched) or a cancel. The turn's outcome settles only when the run ends.
   */
  async pause(runId: string, reason: string): Promise<void> {
    await this.deps.runs.pause(runId, reason);
  }

  private start(input: TurnInput, admitted: (ids: AdmittedTurn) => void): Promise<TurnOutcome>;
  private start(
    input: TurnInput,
    admitted: (ids: AdmittedTurn) => void,
    fromNotices: true,
  ): Promise<TurnOutcome | undefined>;
  private async start(
    input: TurnInput,
    admitted: (ids: AdmittedTurn) => void,
    fromNotices = false,
  ): Promise<TurnOutcome | undefined> {
    const result = await admit(this.deps, input, fromNotices);
    if (!result) return undefined;
    if ('boundTo' in result) {
      // Another writer opened the session's binding first: join that session (in its admission order).
      const { open: _opened, ...session } = input.session ?? {};
      const joined = { ...input, sessionId: result.boundTo, session };
      return this.deps.admission.run(result.boundTo, () => this.start(joined, admitted));
    }
    const { lease, run, turn } = result;
    const driving = this.drive(
      lease,
      input.sessionId,
      (cancellation) => new TurnExecution(this.deps, lease, run, turn, cancellation),
    );
    admitted({ sessionId: input.sessionId, runId: lease.runId, turnId: turn.streamId });
    return driving;
  }

  /** Runs the loop for a run, tracked as live (cancellable) and as a drive (awaited by close). */
  private drive(
    lease: RunLease,
    sessionId: string,
    state: (cancellation: Cancellation) => TurnExecution | Promise<TurnExecution>,
  ): Promise<TurnOutcome> {
    const runId = lease.runId;
    const cancellation = new Cancellation();
    const live = { cancellation, sessionId };
    this.live.set(runId, live); // at once: a cancel or a close from now on reaches this drive
    const run = (async () => {
      try {
        return await runLoop(this.deps, await state(cancellation));
      } finally {
        if (this.live.get(runId) === live) this.live.delete(runId);
      }
    })();
    this.drives.add(run);
    this.driving.set(runId, run);
    void run
      .finally(() => {
        this.drives.delete(run);
        if (this.driving.get(runId) === run) this.driving.delete(runId);
      })
      .catch(() => undefined);
    return run;
  }

  /** The pin the turn recorded on its `turn.started` (null in logs older than pins). */
  private async pinOf(turnId: string): Promise<TurnPin | null> {
    const [first] = await this.deps.store.readStream(turnId, { limit: 1 });
    const started = first ? asDomainEvent(first) : undefined;
    return started?.type === 'turn.started' ? (started.data.core ?? null) : null;
  }

  /** The run's latest turn, from the runs read model (turn streams are separate from the run stream). */
  private async currentTurnId(runId: string): Promise<string | undefined> {
    const view = await runsReader(this.deps.store).get(runId);
    return view?.turnIds.at(-1);
  }
}
