import { mkdirSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { type Actor, type Clock, createIdGenerator, type IdGenerator, systemClock } from '@demiurge/contracts';
import {
  BackgroundDispatcher,
  createOperatorAdapter,
  createWebhookAdapter,
  type DeliveryAdapter,
  DeliveryRuntime,
  type OperatorAdapter,
  SessionInteractionRouter,
} from '@demiurge/delivery';
import type { EventStore } from '@demiurge/event-store';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import {
  type DeliveryStatusEntry,
  deliveryStatusPrefix,
  OutboxCollections,
  outboxProjector,
} from '@demiurge/projector-outbox';
import { RunsCollections, type RunView, runsProjector } from '@demiurge/projector-runs';
import { type ModelProvider, providerFromConfig } from '@demiurge/providers';
import { SchedulerRuntime } from '@demiurge/scheduler';
import { mayCancelRun, RunNotOwnedError } from '@demiurge/sessions';
import { type AgentCore, BackgroundWorkRuntime, loadCore } from '@demiurge/slots';
import { createTurnRuntime, type TurnOutcome, type TurnRuntime } from '@demiurge/turn-engine';
import { RuntimeTaskWorker, terminalExecHandler, workerTaskKinds } from '@demiurge/workers';
import { filter, Subject } from 'rxjs';
import { createAgentSpawnHandler } from './agent-spawn.js';
import { COMPLETION_WAKE_EVENTS, type CompletionRound, CompletionTurns } from './completion-turns.js';
import { type ConfigOverrides, type HostConfig, loadConfig } from './config.js';
import { describeFailure } from './describe-failure.js';
import { hostIdentity, isHostAlive } from './host-identity.js';
import { stopOrphanedToolProcesses } from './orphan-processes.js';
import { hostProjectors } from './projectors.js';
import { watchRunCommands } from './run-resumer.js';
import { SCHEDULE_CHANNEL, scheduledRouteOf } from './schedule-delivery.js';
import { createSlotHooks } from './slot-hooks.js';

/** The bundled default Agent Core: `agent/` at the repository root. */
export const DEFAULT_CORE_DIR = resolve(import.meta.dirname, '..', '..', '..', 'agent');

export interface AppOptions {
  readonly home: string;
  readonly overrides?: ConfigOverrides;
  readonly env?: NodeJS.ProcessEnv;
  readonly clock?: Clock;
  readonly ids?: IdGenerator;
  /** This host process; default `<hostname>-<pid>-<random>`. */
  readonly owner?: string;
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

/** Pushes for operator clients that are not projected from the log (deliveries shown to the operator). */
export interface OperatorPush {
  readonly event: 'operator.deliver';
  readonly payload: { delivery_id: string; session_id: string; message_id: string; text: string };
}

/**
 * The host's routes: every session of this home is served by the host's own adapters (the operator adapter,
 * and the webhook when configured), bound on first use — so deliveries of runs recovered after a restart,
 * or queued before a crash, find their route.
 */
class HostRouter extends SessionInteractionRouter {
  private readonly bound = new Set<string>();

  constructor(private readonly adapters: readonly DeliveryAdapter[]) {
    super();
  }

  ensure(sessionId: string): void {
    if (this.bound.has(sessionId)) return;
    this.bound.add(sessionId);
    for (const adapter of this.adapters) this.bind(sessionId, adapter);
  }

  override route(sessionId: string, channel: string) {
    this.ensure(sessionId);
    return super.route(sessionId, channel);
  }
}

/** A host process's path to its store file. */
export const storePath = (home: string) => join(home, 'runtime', 'runtime.sqlite3');

/**
 * The Demiurge host (seed 003 DemiurgeApp). `start` validates the configuration, opens the store
 * (fail-stop on a corrupt or newer database), runs recovery — durable work (expired leases, unknown
 * sends), deliveries, runs whose owner is gone — then starts delivery dispatch and the other loops.
 * `close` closes admission first, lets turns drain and releases the rest, drains deliveries and
 * background work, and closes the store; nothing starts after close begins.
 */
export class DemiurgeApp {
  readonly pushes$ = new Subject<OperatorPush>();
  /** The detached tasks running in this process that `close` cancelled (set once the worker has closed). */
  tasksCancelledAtClose: Awaited<ReturnType<RuntimeTaskWorker['close']>>['cancelled'] = [];
  private closing: Promise<void> | undefined;
  private closePhase = 'not closing';
  private readonly turns = new Set<Promise<unknown>>();
  private readonly loops: { close(): Promise<void> }[] = [];
  private dispatcherLoop: { close(): Promise<void> } | undefined;
  private completions: CompletionTurns | undefined;

  private constructor(
    readonly home: string,
    readonly config: HostConfig,
    readonly store: EventStore,
    readonly runtime: TurnRuntime,
    readonly provider: ModelProvider,
    readonly delivery: DeliveryRuntime,
    readonly router: SessionInteractionRouter,
    readonly operatorAdapter: OperatorAdapter,
    private readonly webhook: DeliveryAdapter | undefined,
    readonly owner: string,
    readonly core: AgentCore,
    readonly workspace: string,
    readonly clock: Clock,
    readonly worker: RuntimeTaskWorker,
    readonly scheduler: SchedulerRuntime,
    readonly background: BackgroundWorkRuntime,
  ) {}

  /** The Agent Core directory this host runs. */
  get coreDir(): string {
    return this.core.dir;
  }

  static async start(options: AppOptions): Promise<DemiurgeApp> {
    const home = resolve(options.home);
    const config = loadConfig(home, options.overrides, options.env);
    mkdirSync(join(home, 'runtime'), { recursive: true, mode: 0o700 });
    const clock = options.clock ?? systemClock;
    const ids = options.ids ?? createIdGenerator(clock);
    const owner = options.owner ?? hostIdentity();
    const env = options.env ?? process.env;
    const p = config.provider;
    const provider = await providerFromConfig(
      p.name === 'fake'
        ? {
            provider: 'fake',
            ...(p.model ? { model: p.model } : {}),
            ...(p.fake_script ? { fakeScript: resolve(home, p.fake_script) } : {}),
          }
        : {
            provider: 'openai',
            ...(p.model ? { model: p.model } : {}),
            ...(p.base_url ? { baseUrl: p.base_url } : {}),
            ...(p.timeout_ms ? { timeoutMs: p.timeout_ms } : {}),
            ...(p.max_retries !== undefined ? { maxRetries: p.max_retries } : {}),
            ...(p.api_key_env && env[p.api_key_env] ? { apiKey: env[p.api_key_env] } : {}),
          },
      { env },
    );
    const store = await openSqliteEventStore({
      path: storePath(home),
      projectors: hostProjectors,
      clock,
      ids,
      synchronous: config.store.synchronous,
    });
    try {
      const core = await loadCore(resolve(config.core ?? DEFAULT_CORE_DIR));
      const workspace = realpathSync(resolve(config.workspace ?? process.cwd()));
      const background = new BackgroundWorkRuntime({
        onError: (failure) => process.stderr.write(`demiurge: background ${describeFailure(failure)}\n`),
      });
      let slotHooks: ReturnType<typeof createSlotHooks> | undefined;
      let worker: RuntimeTaskWorker | undefined;
      const runtime = createTurnRuntime({
        store,
        clock,
        ids,
        owner,
        provider,
        workspaceRoot: workspace,
        runLeaseMs: config.leases.run_ms,
        onPlanModeWrite: config.plan_mode.on_write,
        stepBudget: core.limits.stepBudget,
        taskKinds: workerTaskKinds,
        delegationLimits: { maxDepth: core.limits.maxDelegationDepth },
        coreId: core.id,
        knownSlots: {
          input: [...core.pipelines.input.serial, ...core.pipelines.input.parallel],
          output: [...core.pipelines.output.serial, ...core.pipelines.output.parallel],
        },
        cancelTask: (ref, reason) => (worker ? worker.cancel(ref, reason) : Promise.resolve()),
        hooks: {
          input: (turn) => slotHooks!.input!(turn),
          output: (turn) => slotHooks!.output!(turn),
        },
      });
      slotHooks = createSlotHooks({
        store,
        clock,
        ids,
        core,
        sessions: runtime.sessions,
        host: runtime.host,
        background,
        workspaceRoot: workspace,
        routeOf: (sessionId) => scheduledRouteOf(store, runtime.sessions, sessionId),
      });
      // Slot modules are imported before the first turn, not under load (where a first import can outlast a
      // short slot timeout). A module that cannot be imported fails its slot runs as before.
      for (const failure of await slotHooks.preload()) {
        process.stderr.write(
          `demiurge: ${describeFailure({ name: `importing slot ${failure.slotId} of core ${core.id}`, error: failure.error })}\n`,
        );
      }
      worker = new RuntimeTaskWorker({
        store,
        clock,
        ids,
        controlPlane: runtime.controlPlane,
        host: owner,
        artifactsDir: join(home, 'runtime', 'artifacts'),
        graceMs: config.tasks.grace_ms,
        isHostAlive,
        handlers: {
          'terminal.exec': terminalExecHandler,
          'agent.spawn': createAgentSpawnHandler({
            sessions: runtime.sessions,
            engine: () => runtime.engine,
            coreId: core.id,
          }),
        },
      } as ConstructorParameters<typeof RuntimeTaskWorker>[0]);
      const scheduler = new SchedulerRuntime({
        store,
        clock,
        ids,
        host: runtime.host,
        work: runtime.work,
        controlPlane: runtime.controlPlane,
        coreId: core.id,
        owner,
        schedules: core.dir,
        startSession: async (spec) => {
          const { session } = await runtime.sessions.resolve(
            { coreId: spec.coreId, channel: SCHEDULE_CHANNEL, conversationKey: spec.fireKey },
            { title: spec.title },
          );
          return { sessionId: session.sessionId };
        },
        fire: async (fire) => {
          const outcome = await runtime.engine.runTurn({
            sessionId: fire.sessionId,
            text: fire.prompt,
            actor: { kind: 'schedule', id: fire.scheduleId },
          });
          if (outcome.status === 'interrupted') {
            throw new Error(
              'the host closed while the scheduled turn ran; the next host start resumes the turn (its answer is recorded in the fire session)',
            );
          }
          if (outcome.status !== 'completed')
            throw new Error(`the scheduled turn ended ${outcome.status}: ${outcome.text}`);
          return { summary: outcome.text };
        },
      });
      const operatorAdapter = createOperatorAdapter();
      const webhook = config.delivery.webhook
        ? createWebhookAdapter({ url: config.delivery.webhook.url, timeoutMs: config.delivery.webhook.timeout_ms })
        : undefined;
      const router = new HostRouter([operatorAdapter, ...(webhook ? [webhook] : [])]);
      const delivery = new DeliveryRuntime({ store, clock, ids, work: runtime.work, router, owner });
      const app = new DemiurgeApp(
        home,
        config,
        store,
        runtime,
        provider,
        delivery,
        router,
        operatorAdapter,
        webhook,
        owner,
        core,
        workspace,
        clock,
        worker,
        scheduler,
        background,
      );
      operatorAdapter.attach((d) => {
        app.pushes$.next({
          event: 'operator.deliver',
          payload: { delivery_id: d.deliveryId, session_id: d.sessionId, message_id: d.messageId, text: d.text },
        });
        return { externalRef: `operator:${d.deliveryId}` };
      });
      await app.recover(options.recoverRuns ?? true);
      if (options.background ?? true) app.startLoops(options.completionTurns ?? true);
      return app;
    } catch (err) {
      await store.close();
      throw err;
    }
  }

  /** Whether close has begun. */
  get isClosing(): boolean {
    return this.closing !== undefined;
  }

  /**
   * Admits a user input: resolves or creates the session, then starts the turn; resolves with the ids as
   * soon as the input, run and turn are committed. The outcome settles when the turn ends.
   */
  async submit(input: SubmitInput): Promise<Submitted> {
    if (this.closing) throw new Error('the host is closing: no new turn is admitted');
    const { sessions, engine } = this.runtime;
    const sessionId =
      input.sessionId ??
      (input.newSession
        ? (await sessions.create({ title: input.text.slice(0, 60), coreId: 'default' })).sessionId
        : undefined) ??
      (
        await sessions.resolve({
          coreId: 'default',
          channel: input.channel ?? 'operator',
          conversationKey: input.conversationKey ?? 'default',
        })
      ).session.sessionId;
    if (input.plan !== undefined) await sessions.setMode(sessionId, input.plan ? 'plan' : 'default');
    this.bindRoutes(sessionId);
    let admitted!: (ids: { runId: string; turnId: string }) => void;
    const ids = new Promise<{ runId: string; turnId: string }>((resolve) => {
      admitted = resolve;
    });
    const outcome = engine.runTurn({
      sessionId,
      text: input.text,
      ...(input.actor ? { actor: input.actor } : {}),
      onAdmitted: (x) => admitted(x),
    });
    this.track(outcome);
    const first = await Promise.race([ids, outcome.then(() => undefined)]);
    const { runId, turnId } = first ?? (await ids);
    return { sessionId, runId, turnId, outcome };
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
        if (!this.closing) process.stderr.write(`demiurge: completion turn in ${sessionId}: ${err.message}\n`);
      },
    });
    return this.completions.round();
  }

  /** Live runs (not final) from the runs read model. */
  async liveRuns(): Promise<RunView[]> {
    const reader = this.store.projection(runsProjector.name);
    const live = await reader.list<{ runId: string }>(RunsCollections.liveRuns);
    const views = await Promise.all(live.map((l) => reader.get<RunView>(RunsCollections.runs, l.runId)));
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
      sending = await this.store
        .projection(outboxProjector.name)
        .list<DeliveryStatusEntry>(OutboxCollections.byStatus, { prefix: deliveryStatusPrefix('sending') });
    } catch {
      // the store is closed already: nothing is being sent
    }
    if (sending.length > 0) parts.push(`deliveries ${sending.map((d) => d.deliveryId).join(', ')}`);
    const background = this.background.active();
    if (background.length > 0) parts.push(`background work ${background.map((b) => b.name).join(', ')}`);
    return `${this.closePhase}${parts.length > 0 ? `: ${parts.join('; ')}` : ''}`;
  }

  private bindRoutes(sessionId: string): void {
    (this.router as HostRouter).ensure(sessionId);
  }

  private track(promise: Promise<unknown>): void {
    this.turns.add(promise);
    void promise.finally(() => this.turns.delete(promise)).catch(() => undefined);
  }

  private async recover(resumeRuns: boolean): Promise<void> {
    await this.runtime.work.recover(this.clock.now());
    await this.delivery.recover();
    await this.stopOrphans();
    await this.worker.recover();
    if (!resumeRuns) return;
    const now = new Date(this.clock.now()).toISOString();
    for (const run of await this.liveRuns()) {
      const ownerDead = run.owner !== null && !isHostAlive(run.owner);
      const ownerGone = ownerDead || !run.leaseUntil || run.leaseUntil < now || run.owner === null;
      if (!ownerGone || run.status === 'paused') continue;
      const resumed = this.runtime.engine.resume(run.runId, undefined, { ownerDead }).catch((err: Error) => {
        process.stderr.write(`demiurge: recovering run ${run.runId}: ${err.message}\n`);
      });
      this.track(resumed);
    }
  }

  /**
   * Stops foreground tool processes (`shell`) a killed host left running: verified by start marker first,
   * each stop recorded as `tool_call.process_stopped`.
   */
  private async stopOrphans(): Promise<void> {
    await stopOrphanedToolProcesses(this.store, {
      isHostAlive,
      graceMs: this.config.tasks.grace_ms,
      owner: this.owner,
    });
  }

  private startLoops(completionTurns: boolean): void {
    const commands = watchRunCommands({
      store: this.store,
      engine: this.runtime.engine,
      runs: this.runtime.runs,
      owner: this.owner,
      clock: this.clock,
      isHostAlive,
      closing: () => this.isClosing,
      track: (outcome) => this.track(outcome),
      onError: (runId, error) =>
        process.stderr.write(`demiurge: ${describeFailure({ name: `continuing run ${runId}`, error })}\n`),
    });
    this.loops.push({ close: async () => commands.close() });
    const dispatcher = new BackgroundDispatcher({
      runtime: this.delivery,
      intervalMs: this.config.delivery.poll_ms,
      onError: (error) => process.stderr.write(`demiurge: ${describeFailure({ name: 'delivery', error })}\n`),
    });
    dispatcher.start();
    this.loops.push(dispatcher);
    this.dispatcherLoop = dispatcher;
    this.loops.push(this.every(250, () => this.worker.runSubmitted(), 'tasks', ['task.submitted']));
    if (completionTurns) {
      this.loops.push(this.every(1_000, () => this.deliverCompletions(), 'completions', COMPLETION_WAKE_EVENTS));
    }
    if (this.config.scheduler.enabled) {
      this.loops.push(
        this.every(
          this.config.scheduler.tick_ms,
          async () => {
            await this.scheduler.tick();
            for (const fire of await this.scheduler.runDue({ limit: 4 })) {
              if (fire.outcome === 'error')
                process.stderr.write(`demiurge: schedule ${fire.scheduleId}: ${String(fire.cause)}\n`);
            }
          },
          'scheduler',
        ),
      );
    }
  }

  /** A background loop: `round` every `ms` (and at once on any of `wakeOn`), one round at a time. */
  private every(ms: number, round: () => Promise<unknown>, name: string, wakeOn: string[] = []) {
    let stopped = false;
    let running: Promise<unknown> = Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    const run = () => {
      if (stopped) return;
      clearTimeout(timer);
      running = running
        .then(round)
        .catch((error: unknown) => process.stderr.write(`demiurge: ${describeFailure({ name, error })}\n`))
        .finally(() => {
          if (!stopped) timer = setTimeout(run, ms);
        });
    };
    const sub = this.store.events$.pipe(filter((e) => wakeOn.includes(e.type))).subscribe(() => setImmediate(run));
    timer = setTimeout(run, 0);
    return {
      async close() {
        stopped = true;
        clearTimeout(timer);
        sub.unsubscribe();
        await running;
      },
    };
  }
}

/** The directory the store of a home lives in. */
export const runtimeDir = (home: string) => dirname(storePath(home));
