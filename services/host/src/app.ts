import { type Actor, type Clock, type IdGenerator, IdPrefix } from '@demiurge/contracts';
import {
  BackgroundDispatcher,
  type DeliveryAdapter,
  type DeliveryRuntime,
  type OperatorAdapter,
} from '@demiurge/delivery';
import type { DamagedStoreError, PollLoop } from '@demiurge/event-store';
import { type DeliveryStatusEntry, deliveryStatusPrefix, outboxReader } from '@demiurge/projector-outbox';
import { type RunView, runsReader } from '@demiurge/projector-runs';
import type { ModelProvider } from '@demiurge/providers';
import type { SchedulerRuntime } from '@demiurge/scheduler';
import { mayCancelRun, type OpenSessionSpec, RunNotOwnedError } from '@demiurge/sessions';
import type { AgentCore, BackgroundWorkRuntime } from '@demiurge/slots';
import type { TurnOutcome, TurnRuntime } from '@demiurge/turn-engine';
import type { RuntimeTaskWorker } from '@demiurge/workers';
import { firstValueFrom, type Subject } from 'rxjs';
import { reportClaimStats } from './claim-stats.js';
import { COMPLETION_WAKE_EVENTS, type CompletionRound, CompletionTurns } from './completion-turns.js';
import type { HostConfig } from './config.js';
import type { CoreSource } from './core-source.js';
import { describeFailure } from './describe-failure.js';
import { sweepEvolveCopies } from './evolve-copies.js';
import { hostLoop, schedulerLoops } from './host-loops.js';
import type { Logger } from './logger.js';
import { stopOrphanedToolProcesses } from './orphan-processes.js';
import { watchRunCommands } from './run-resumer.js';
import { createRuntime, type HostRuntime, type OperatorPush, type RuntimeOptions } from './runtime/create-runtime.js';
import type { HostRouter } from './runtime/host-router.js';
import type { HostStore } from './store/host-store.js';

export { DEFAULT_CORE_DIR, runtimeDir, storePath } from './paths.js';
export type { OperatorPush } from './runtime/create-runtime.js';

export interface AppOptions extends RuntimeOptions {
  /** Resume runs whose owner is gone, at start (default true). */
  readonly recoverRuns?: boolean;
  /** Poll loops (delivery, scheduler, tasks); default true. Off: callers drive them (tests). */
  readonly background?: boolean;
  /**
   * The completion loop among the background loops: idle sessions get completion turns for their pending
   * task notices (default true: a serving host). Off (in-process `run`/`chat`): notices wait for a serving
   * host, or join the session's next input.
   */
  readonly completionTurns?: boolean;
}

export interface SubmitInput {
  readonly sessionId?: string;
  readonly text: string;
  readonly plan?: boolean;
  /** The conversation of the default session (`channel` + key), when no session id is given. */
  readonly channel?: string;
  readonly conversationKey?: string;
  /** Without a session id: start a new session instead of the channel's default one. */
  readonly newSession?: boolean;
  /** Who submits (an operator client, the CLI user, ...): the run's principal and the admission's actor. */
  readonly actor?: Actor;
}

/** A submitted turn: ids at admission, the outcome when it ends. */
export interface Submitted {
  readonly sessionId: string;
  readonly runId: string;
  readonly turnId: string;
  readonly outcome: Promise<TurnOutcome>;
}

/**
 * The Demiurge host (seed 003 DemiurgeApp) over a wired {@link HostRuntime}. `start` wires one
 * ({@link createRuntime}), runs recovery — durable work (expired leases, unknown sends), deliveries, runs
 * whose owner is gone — then starts delivery dispatch and the other loops. `close` closes admission first,
 * lets turns drain and releases the rest, drains deliveries and background work, and closes the store;
 * nothing starts after close begins.
 */
export class DemiurgeApp {
  /** The detached tasks running in this process that `close` cancelled (set once the worker has closed). */
  tasksCancelledAtClose: Awaited<ReturnType<RuntimeTaskWorker['close']>>['cancelled'] = [];
  readonly home: string;
  readonly config: HostConfig;
  readonly store: HostStore;
  /** Sessions, runs, the engine, approvals, the control plane and durable work. */
  readonly runtime: TurnRuntime;
  readonly provider: ModelProvider;
  readonly delivery: DeliveryRuntime;
  readonly router: HostRouter;
  readonly operatorAdapter: OperatorAdapter;
  readonly webhook: DeliveryAdapter | undefined;
  readonly owner: string;
  /** The working copy (the configured core directory) as loaded at start. */
  readonly core: AgentCore;
  /** The core by revision: the current one (picked up at each admission) and the ones turns are pinned to. */
  readonly coreSource: CoreSource;
  readonly workspace: string;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly logger: Logger;
  readonly worker: RuntimeTaskWorker;
  readonly scheduler: SchedulerRuntime;
  readonly background: BackgroundWorkRuntime;
  readonly pushes$: Subject<OperatorPush>;
  /** The core's MCP tool servers; undefined when its `mcp.yaml` lists none. */
  readonly mcp: HostRuntime['mcp'];
  /** Whether the host that wrote an owner id may still run (the pid check, or what a simulation injected). */
  readonly isHostAlive: (owner: string) => boolean;
  /**
   * Resolves if the store stops on damage met while the host runs (fail-stop): every later call is refused
   * with that error, so whoever runs the host should close it and stop (`demiurge serve` exits 1).
   */
  readonly damaged: Promise<DamagedStoreError>;
  private closing: Promise<void> | undefined;
  private closePhase = 'not closing';
  private readonly turns = new Set<Promise<unknown>>();
  private readonly loops: { close(): Promise<void> }[] = [];
  private dispatcherLoop: { close(): Promise<void> } | undefined;
  private completions: CompletionTurns | undefined;

  /** A host over a wired runtime; nothing runs until {@link recover} and {@link startLoops} (or use `start`). */
  constructor(parts: HostRuntime) {
    this.home = parts.home;
    this.config = parts.config;
    this.store = parts.store;
    this.runtime = parts.turns;
    this.provider = parts.provider;
    this.delivery = parts.delivery;
    this.router = parts.router;
    this.operatorAdapter = parts.operatorAdapter;
    this.webhook = parts.webhook;
    this.owner = parts.owner;
    this.core = parts.core;
    this.coreSource = parts.coreSource;
    this.workspace = parts.workspace;
    this.clock = parts.clock;
    this.ids = parts.ids;
    this.logger = parts.logger;
    this.worker = parts.worker;
    this.scheduler = parts.scheduler;
    this.background = parts.background;
    this.pushes$ = parts.pushes$;
    this.mcp = parts.mcp;
    this.isHostAlive = parts.isHostAlive;
    this.damaged = firstValueFrom(parts.damaged$);
    this.damaged.catch(() => undefined);
  }

  /** The Agent Core directory this host runs. */
  get coreDir(): string {
    return this.core.dir;
  }

  /** Wires a runtime ({@link createRuntime}), recovers, and starts the background loops (unless told not to). */
  static async start(options: AppOptions): Promise<DemiurgeApp> {
    const parts = await createRuntime(options);
    try {
      const app = new DemiurgeApp(parts);
      await app.recover(options.recoverRuns ?? true);
      if (options.background ?? true) app.startLoops(options.completionTurns ?? true);
      return app;
    } catch (err) {
      await parts.mcp?.close('the host failed to start');
      await parts.store.close();
      throw err;
    }
  }

  /** Whether close has begun. */
  get isClosing(): boolean {
    return this.closing !== undefined;
  }

  /**
   * Admits a user input in one commit: the session opened (a new one, or the channel's default on first use)
   * and its plan mode switched where asked, with the input, the run and the turn. The run and turn ids are
   * generated here; resolves with them once that commit is made. The outcome settles when the turn ends.
   */
  async submit(input: SubmitInput): Promise<Submitted> {
    if (this.closing) throw new Error('the host is closing: no new turn is admitted');
    const { sessionId, open } = await this.sessionOf(input);
    const mode = input.plan === undefined ? undefined : input.plan ? ('plan' as const) : ('default' as const);
    const runId = this.ids.next(IdPrefix.run);
    const turnId = this.ids.next(IdPrefix.turn);
    this.bindRoutes(sessionId);
    const turn = this.runtime.engine.startTurn({
      sessionId,
      text: input.text,
      runId,
      turnId,
      ...(open || mode ? { session: { ...(open ? { open } : {}), ...(mode ? { mode } : {}) } } : {}),
      ...(input.actor ? { actor: input.actor } : {}),
    });
    this.track(turn.outcome);
    const admitted = await turn.admitted;
    this.bindRoutes(admitted.sessionId);
    return { ...admitted, outcome: turn.outcome };
  }

  /** The session an input goes to: the one named, or a new one, or the channel's default (opened on first use). */
  private async sessionOf(input: SubmitInput): Promise<{ sessionId: string; open?: OpenSessionSpec }> {
    if (input.sessionId) return { sessionId: input.sessionId };
    const sessionId = this.ids.next(IdPrefix.session);
    if (input.newSession) return { sessionId, open: { title: input.text.slice(0, 60), coreId: 'default' } };
    const channel = input.channel ?? 'operator';
    const conversationKey = input.conversationKey ?? 'default';
    const binding = { coreId: 'default', channel, conversationKey };
    const bound = await this.runtime.sessions.boundSession(binding);
    if (bound) return { sessionId: bound };
    return { sessionId, open: { title: `${channel} ${conversationKey}`, coreId: 'default', binding } };
  }

  /**
   * One round of the completion loop (the background loop does this on its own): an idle session with
   * pending task notices gets a completion turn; a busy one takes them with its next input.
   */
  deliverCompletions(): Promise<CompletionRound> {
    if (this.closing) return Promise.resolve({ started: [], deferred: [], settled: 0, quiet: [] });
    this.completions ??= new CompletionTurns({
      store: this.store,
      runtime: this.runtime,
      clock: this.clock,
      track: (outcome) => this.track(outcome),
      report: (sessionId, err) => {
        if (!this.closing) this.logger.error(`completion turn in ${sessionId}: ${err.message}`, { sessionId });
      },
    });
    return this.completions.round();
  }

  /** Live runs (not final) from the runs read model. */
  async liveRuns(): Promise<RunView[]> {
    const reader = runsReader(this.store);
    const live = await reader.live();
    const views = await Promise.all(live.map((l) => reader.get(l.runId)));
    return views.filter((v): v is RunView => v !== undefined);
  }

  /**
   * Cancels every live run of the session (an operator interrupt). With `by`, each run's ownership is checked
   * first: a run `by` may not cancel refuses the whole interrupt (RunNotOwnedError) and nothing is cancelled.
   */
  async interrupt(sessionId: string, reason = 'interrupted by the operator', by?: Actor): Promise<number> {
    const runs = (await this.liveRuns()).filter((r) => r.sessionId === sessionId);
    if (by) {
      for (const view of runs) {
        const run = await this.runtime.runs.load(view.runId);
        if (run.principal && !mayCancelRun(run.principal, run.sessionId, by))
          throw new RunNotOwnedError(run.streamId, run.principal, by);
      }
    }
    for (const run of runs) await this.runtime.engine.cancel(run.runId, reason, by);
    return runs.length;
  }

  /** Cancels a detached task (through the task worker when it runs the task: single-flight cleanup). */
  async cancelTask(ref: { sessionId: string; taskId: string }, reason: string): Promise<void> {
    await this.worker.cancel(ref, reason);
  }

  /** One dispatch round of deliveries (the background loop does this on its own). */
  dispatchDeliveries(limit = 20) {
    return this.delivery.dispatchDue({ limit });
  }

  /**
   * The close contract: the background loops stop starting rounds, admission closes, running turns drain
   * for 2 s (then the call in flight is stopped and the run released for the next host; a paused run is
   * released too), detached tasks are cancelled, the loop rounds in flight end, deliveries and background
   * work drain, the store closes. Idempotent. {@link closeStatus} says what a close that takes long waits for.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      // The loops stop starting rounds now; a round in flight (a scheduled fire runs a whole turn) is awaited
      // only after the engine closed, which stops that turn too: waiting for it first could take as long as the turn.
      const loopsClosed = Promise.allSettled(
        this.loops.filter((l) => l !== this.dispatcherLoop).map((loop) => loop.close()),
      );
      this.closePhase = 'draining running turns';
      await this.runtime.engine.close({ drainMs: 2_000 });
      this.closePhase = 'stopping detached tasks';
      this.tasksCancelledAtClose = (await this.worker.close()).cancelled;
      this.closePhase = 'finishing the background loop rounds in flight (tasks, scheduler)';
      await loopsClosed;
      this.closePhase = 'settling turns';
      await Promise.allSettled([...this.turns]);
      this.closePhase = 'finishing the delivery round in flight';
      if (this.dispatcherLoop) await this.dispatcherLoop.close().catch(() => undefined);
      this.closePhase = 'draining background work (parallel slots)';
      await this.background.drain(5_000);
      this.closePhase = 'stopping MCP servers';
      await this.mcp?.close();
      this.pushes$.complete();
      this.closePhase = 'closing the store';
      await this.store.close();
      this.closePhase = 'closed';
    })();
    return this.closing;
  }

  /**
   * What a close that has not finished is waiting for, for a person: the phase, then the runs this host still
   * drives, its detached tasks, deliveries being sent and background work still running.
   */
  async closeStatus(): Promise<string> {
    const parts: string[] = [];
    const runs = this.runtime.engine.liveRuns();
    if (runs.length > 0) parts.push(`runs ${runs.join(', ')}`);
    const tasks = this.worker.activeTaskIds();
    if (tasks.length > 0) parts.push(`tasks ${tasks.join(', ')}`);
    let sending: DeliveryStatusEntry[] = [];
    try {
      sending = await outboxReader(this.store).byStatus.list({ prefix: deliveryStatusPrefix('sending') });
    } catch {
      // the store is closed already: nothing is being sent
    }
    if (sending.length > 0) parts.push(`deliveries ${sending.map((d) => d.deliveryId).join(', ')}`);
    const background = this.background.active();
    if (background.length > 0) parts.push(`background work ${background.map((b) => b.name).join(', ')}`);
    return `${this.closePhase}${parts.length > 0 ? `: ${parts.join('; ')}` : ''}`;
  }

  private bindRoutes(sessionId: string): void {
    this.router.ensure(sessionId);
  }

  private track(promise: Promise<unknown>): void {
    this.turns.add(promise);
    void promise.finally(() => this.turns.delete(promise)).catch(() => undefined);
  }

  /**
   * Recovery at start: expired leases and unknown sends of durable work, deliveries, tool processes a killed
   * host left running, detached tasks whose owner is gone and (with `resumeRuns`) runs whose owner is gone.
   */
  async recover(resumeRuns: boolean): Promise<void> {
    await this.runtime.work.recover(this.clock.now());
    await this.delivery.recover();
    // Foreground tool processes (`shell`) a killed host left running: verified by start marker first, each
    // stop recorded as `tool_call.process_stopped`.
    await stopOrphanedToolProcesses(this.store, {
      isHostAlive: this.isHostAlive,
      graceMs: this.config.tasks.grace_ms,
      owner: this.owner,
    });
    await this.worker.recover();
    await sweepEvolveCopies(this.home, this.store); // working copies of evolves settled meanwhile
    if (!resumeRuns) return;
    const now = new Date(this.clock.now()).toISOString();
    for (const run of await this.liveRuns()) {
      const ownerDead = run.owner !== null && !this.isHostAlive(run.owner);
      const ownerGone = ownerDead || !run.leaseUntil || run.leaseUntil < now || run.owner === null;
      if (!ownerGone || run.status === 'paused') continue;
      const resumed = this.runtime.engine.resume(run.runId, undefined, { ownerDead }).catch((err: Error) => {
        this.logger.error(`recovering run ${run.runId}: ${err.message}`, { runId: run.runId });
      });
      this.track(resumed);
    }
  }

  /** Starts the background loops: run commands, delivery dispatch, submitted tasks, completions, the scheduler. */
  startLoops(completionTurns: boolean): void {
    const { logger } = this;
    const commands = watchRunCommands({
      store: this.store,
      engine: this.runtime.engine,
      runs: this.runtime.runs,
      owner: this.owner,
      clock: this.clock,
      isHostAlive: this.isHostAlive,
      closing: () => this.isClosing,
      track: (outcome) => this.track(outcome),
      onError: (runId, error) => logger.error(describeFailure({ name: `continuing run ${runId}`, error }), { runId }),
      // Runs whose owner died (another host on a shared database) are taken over within half a lease.
      takeOverEveryMs: Math.max(1_000, Math.round(this.runtime.runs.leaseMs / 2)),
    });
    this.loops.push({ close: async () => commands.close() });
    const dispatcher = new BackgroundDispatcher({
      runtime: this.delivery,
      intervalMs: this.config.delivery.poll_ms,
      events$: this.store.events$,
      onError: (error) => logger.error(describeFailure({ name: 'delivery', error })),
    });
    dispatcher.start();
    this.loops.push(dispatcher);
    this.dispatcherLoop = dispatcher;
    const taskWake = ['task.submitted', 'core.evolve_released']; // a scope given back: a waiting evolve may start
    this.loops.push(this.every(250, () => this.worker.runSubmitted(), 'tasks', taskWake));
    this.loops.push(reportClaimStats(this.runtime.work.claimStats, logger));
    if (completionTurns) {
      this.loops.push(this.every(1_000, () => this.deliverCompletions(), 'completions', COMPLETION_WAKE_EVENTS));
    }
    if (this.config.scheduler.enabled) {
      this.loops.push(...schedulerLoops(this, this.scheduler, this.config.scheduler.tick_ms));
    }
  }

  /** A background loop of this host: `round` every `ms` (and at once on any of `wakeOn`), one round at a time. */
  private every(ms: number, round: () => Promise<unknown>, name: string, wakeOn: readonly string[] = []): PollLoop {
    return hostLoop(this, { ms, round, name, wakeOn });
  }
}
