import { mkdirSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { type Clock, createIdGenerator, type IdGenerator, systemClock } from '@demiurge/contracts';
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
import { RunsCollections, type RunView, runsProjector } from '@demiurge/projector-runs';
import { type ModelProvider, providerFromConfig } from '@demiurge/providers';
import { SchedulerRuntime } from '@demiurge/scheduler';
import { type AgentCore, BackgroundWorkRuntime, loadCore } from '@demiurge/slots';
import { createTurnRuntime, type TurnHooks, type TurnOutcome, type TurnRuntime } from '@demiurge/turn-engine';
import { RuntimeTaskWorker, terminalExecHandler, workerTaskKinds } from '@demiurge/workers';
import { filter, Subject } from 'rxjs';
import { createAgentSpawnHandler } from './agent-spawn.js';
import { COMPLETION_WAKE_EVENTS, type CompletionRound, CompletionTurns } from './completion-turns.js';
import { type ConfigOverrides, type HostConfig, loadConfig } from './config.js';
import { hostIdentity, isHostAlive } from './host-identity.js';
import { hostProjectors } from './projectors.js';
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
  private closing: Promise<void> | undefined;
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
        onError: (err: unknown) => process.stderr.write(`demiurge: background: ${(err as Error).message}\n`),
      } as never);
      let slotHooks: TurnHooks | undefined;
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
      });
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
            { coreId: spec.coreId, channel: 'schedule', conversationKey: spec.fireKey },
            { title: spec.title },
          );
          return { sessionId: session.sessionId };
        },
        fire: async (fire) => {
          const outcome = await runtime.engine.runTurn({ sessionId: fire.sessionId, text: fire.prompt });
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
    const outcome = engine.runTurn({ sessionId, text: input.text, onAdmitted: (x) => admitted(x) });
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
    if (this.closing) return Promise.resolve({ started: [], deferred: [], settled: 0 });
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

  /** Cancels every live run of the session (an operator interrupt). */
  async interrupt(sessionId: string, reason = 'interrupted by the operator'): Promise<number> {
    const runs = (await this.liveRuns()).filter((r) => r.sessionId === sessionId);
    for (const run of runs) await this.runtime.engine.cancel(run.runId, reason);
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
   * The close contract: admission closes first, running turns drain (then are released for the next
   * host), deliveries and background loops drain, the store closes. Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const loop of this.loops.filter((l) => l !== this.dispatcherLoop)) await loop.close().catch(() => undefined);
      await this.runtime.engine.close({ drainMs: 2_000 });
      await this.worker.close();
      await Promise.allSettled([...this.turns]);
      if (this.dispatcherLoop) await this.dispatcherLoop.close().catch(() => undefined);
      await this.background.drain(5_000);
      this.pushes$.complete();
      await this.store.close();
    })();
    return this.closing;
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

  private startLoops(completionTurns: boolean): void {
    const dispatcher = new BackgroundDispatcher({
      runtime: this.delivery,
      intervalMs: this.config.delivery.poll_ms,
      onError: (err) => process.stderr.write(`demiurge: delivery: ${(err as Error).message}\n`),
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
        .catch((err: Error) => process.stderr.write(`demiurge: ${name}: ${err.message}\n`))
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
