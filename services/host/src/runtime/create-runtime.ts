import { mkdirSync, realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Clock, createIdGenerator, type IdGenerator, systemClock, type Timers } from '@demiurge/contracts';
import {
  createOperatorAdapter,
  createWebhookAdapter,
  type DeliveryAdapter,
  DeliveryRuntime,
  type OperatorAdapter,
} from '@demiurge/delivery';
import type { DamagedStoreError } from '@demiurge/event-store';
import type { McpServers } from '@demiurge/mcp';
import type { ModelProvider } from '@demiurge/providers';
import { loadSchedules, type SchedulerRuntime } from '@demiurge/scheduler';
import { type AgentCore, BackgroundWorkRuntime, loadCore } from '@demiurge/slots';
import { createTurnRuntime, type TurnRuntime } from '@demiurge/turn-engine';
import { RuntimeTaskWorker, type TaskHandler, terminalExecHandler } from '@demiurge/workers';
import { Subject } from 'rxjs';
import { createAgentSpawnHandler } from '../agent-spawn.js';
import { type ConfigOverrides, type HostConfig, loadConfig } from '../config.js';
import { CoreSource } from '../core-source.js';
import { describeFailure } from '../describe-failure.js';
import { discardEvolveCopy } from '../evolve-copies.js';
import { createEvolverRunHandler } from '../evolver-run.js';
import { hostIdentity, isHostAlive } from '../host-identity.js';
import { hostTaskKinds } from '../host-task-kinds.js';
import { createLogger, type Logger } from '../logger.js';
import { DEFAULT_CORE_DIR } from '../paths.js';
import { hostProjectors } from '../projectors.js';
import { scheduledRouteOf } from '../schedule-delivery.js';
import { createSlotHooks } from '../slot-hooks.js';
import { hostTestHooks, injectAckBeforeCommit } from '../store/crash-hooks.js';
import { type HostStore, openHostStore, storeSelection } from '../store/host-store.js';
import type { HostTelemetry } from '../telemetry/telemetry.js';
import { hostProvider } from './host-provider.js';
import { HostRouter } from './host-router.js';
import { createScheduler, startMcpServers } from './host-services.js';

/** Where and how a host runtime is wired: the home, configuration overrides and the injected ports. */
export interface RuntimeOptions {
  readonly home: string;
  readonly overrides?: ConfigOverrides;
  readonly env?: NodeJS.ProcessEnv;
  readonly clock?: Clock;
  readonly ids?: IdGenerator;
  /** The timers of the engine's waits (an approval's expiry, a paused run's poll); default the wall clock's. */
  readonly timers?: Timers;
  /** This host process; default `<hostname>-<pid>-<random>`. */
  readonly owner?: string;
  /** Default: quiet one-line text on stderr (`demiurge: ...`). */
  readonly logger?: Logger;
  /** The OpenTelemetry export (`startTelemetry()`), when `OTEL_*` asks for one: traces the provider and the store. */
  readonly telemetry?: HostTelemetry;
  /** The model provider, instead of the one the configuration names (a simulation injects its own). */
  readonly provider?: ModelProvider;
  /** Task handlers that replace the built-in ones of their kind (a simulation runs simulated processes for `terminal.exec`). */
  readonly taskHandlers?: Readonly<Record<string, TaskHandler>>;
  /**
   * The same inputs always give the same log (a simulation): SQLite's group commits independent of timing, a
   * PostgreSQL store in lockstep (its statements one at a time, no notifications).
   */
  readonly deterministicFlush?: boolean;
  /** Whether the host that wrote an owner id may still run (default {@link isHostAlive}: its pid); a simulation knows. */
  readonly isHostAlive?: (owner: string) => boolean;
}

/** Pushes for operator clients that are not projected from the log (deliveries shown to the operator). */
export interface OperatorPush {
  readonly event: 'operator.deliver';
  readonly payload: { delivery_id: string; session_id: string; message_id: string; text: string };
}

/** Every part of a host, wired on one store: what `DemiurgeApp` runs. */
export interface HostRuntime {
  readonly home: string;
  readonly config: HostConfig;
  /** The home's SQLite file, or the PostgreSQL database of `store.kind: postgres` / `DEMIURGE_STORE_URL`. */
  readonly store: HostStore;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly owner: string;
  readonly logger: Logger;
  readonly provider: ModelProvider;
  /** The working copy (the configured core directory) as loaded at start. */
  readonly core: AgentCore;
  /** The core by revision: the current one (picked up at each admission) and the pinned ones. */
  readonly coreSource: CoreSource;
  readonly workspace: string;
  /** Sessions, runs, the engine, approvals, the control plane and durable work. */
  readonly turns: TurnRuntime;
  readonly worker: RuntimeTaskWorker;
  readonly scheduler: SchedulerRuntime;
  readonly background: BackgroundWorkRuntime;
  readonly delivery: DeliveryRuntime;
  readonly router: HostRouter;
  readonly operatorAdapter: OperatorAdapter;
  readonly webhook: DeliveryAdapter | undefined;
  /** The operator adapter's sends, for connected operator clients. */
  readonly pushes$: Subject<OperatorPush>;
  /** Emits once if the store stops on damage met in use (fail-stop): the host must stop. */
  readonly damaged$: Subject<DamagedStoreError>;
  /** The core's MCP tool servers (`mcp.yaml`), started, their tools registered; undefined when it lists none. */
  readonly mcp: McpServers | undefined;
  /** Whether the host that wrote an owner id may still run. */
  readonly isHostAlive: (owner: string) => boolean;
}

/**
 * The host's composition root: validates the configuration, opens the configured store (the home's SQLite
 * file by default, PostgreSQL with `store.kind: postgres` or `DEMIURGE_STORE_URL`; fail-stop on a corrupt or
 * newer database), loads the Agent Core and wires the turn runtime, slots, task worker, scheduler and
 * delivery. Starts nothing and recovers nothing (`DemiurgeApp.start` does); on a failure after the store
 * opened, the store is closed again.
 * @example
 * const runtime = await createRuntime({ home });
 * const app = new DemiurgeApp(runtime);
 */
export async function createRuntime(options: RuntimeOptions): Promise<HostRuntime> {
  const home = resolve(options.home);
  const config = loadConfig(home, options.overrides, options.env);
  mkdirSync(join(home, 'runtime'), { recursive: true, mode: 0o700 });
  const localClock = options.clock ?? systemClock;
  const owner = options.owner ?? hostIdentity();
  const env = options.env ?? process.env;
  const logger = options.logger ?? createLogger();
  const hostAlive = options.isHostAlive ?? isHostAlive;
  const base = options.provider ?? (await hostProvider(config, home, env));
  const provider = options.telemetry ? options.telemetry.traceProvider(base, owner) : base;
  const damaged$ = new Subject<DamagedStoreError>();
  // Crash-point sweeps only (docs/crash-sweep.md): nothing is hooked unless the environment asks.
  const testHooks = hostTestHooks(env);
  const store = await openHostStore(storeSelection(home, config), {
    ...(testHooks.onCommit ? { onCommit: testHooks.onCommit } : {}),
    projectors: hostProjectors,
    clock: localClock,
    ids: options.ids ?? createIdGenerator(localClock),
    onDamaged: (error) => damaged$.next(error),
    ...(options.deterministicFlush ? { deterministicFlush: true } : {}),
  });
  // Before anything appends: recovery's events carry their trace context too.
  options.telemetry?.attach(store, owner);
  let mcp: McpServers | undefined;
  try {
    // Several hosts on one PostgreSQL database judge leases and due times by the server's clock
    // (docs/postgres.md, "The database clock"); a host on SQLite has only its own.
    const clock = options.clock ?? ('databaseClock' in store ? await store.databaseClock() : localClock);
    const ids = options.ids ?? createIdGenerator(clock);
    const core = await loadCore(resolve(config.core ?? DEFAULT_CORE_DIR));
    const coreSource = new CoreSource({ store, home, workingCopy: core });
    const slotCacheDir = join(home, 'cache', 'slots');
    // The kinds this host runs; any other is refused at submit (never left `created` without a handler).
    const handlers: Record<string, TaskHandler> = {};
    const workspace = realpathSync(resolve(config.workspace ?? process.cwd()));
    const background = new BackgroundWorkRuntime({
      onError: (failure) => logger.error(`background ${describeFailure(failure)}`),
    });
    // Two cycles are bound late on purpose: turns run slot hooks that need the sessions of the turn runtime,
    // and cancelling a run cancels its tasks through the worker that needs the runtime's control plane.
    let slotHooks: ReturnType<typeof createSlotHooks> | undefined;
    let worker: RuntimeTaskWorker | undefined;
    const turns = createTurnRuntime({
      store,
      clock,
      ids,
      owner,
      provider,
      workspaceRoot: workspace,
      runLeaseMs: config.leases.run_ms,
      workLeaseMs: config.leases.work_ms,
      // The engine's reports (a lost run lease, a release that failed at close) go through the host's one logger.
      logger,
      onPlanModeWrite: config.plan_mode.on_write,
      ...(options.timers ? { timers: options.timers } : {}),
      compaction: {
        enabled: config.compaction.enabled,
        threshold: config.compaction.threshold,
        keepMessages: config.compaction.keep_messages,
      },
      stepBudget: core.limits.stepBudget,
      taskKinds: hostTaskKinds(() => Object.keys(handlers)),
      evolveTool: true,
      delegationLimits: { maxDepth: core.limits.maxDelegationDepth },
      coreId: core.id,
      // The slots of the core revision the delegating turn is pinned to (never the working copy edited since).
      knownSlots: async (ctx) => {
        const { pipelines } = await coreSource.ofTurn(ctx.turnId);
        return {
          input: [...pipelines.input.serial, ...pipelines.input.parallel],
          output: [...pipelines.output.serial, ...pipelines.output.parallel],
        };
      },
      cancelTask: (ref, reason) => (worker ? worker.cancel(ref, reason) : Promise.resolve()),
      hooks: {
        input: (turn) => slotHooks!.input!(turn),
        output: (turn) => slotHooks!.output!(turn),
        pin: (turn) => slotHooks!.pin!(turn),
        resumable: (pin) => slotHooks!.resumable!(pin),
      },
    });
    mcp = await startMcpServers({ store, clock, ids, owner, core, turns, logger, isHostAlive: hostAlive });
    slotHooks = createSlotHooks({
      store,
      clock,
      ids,
      core,
      sessions: turns.sessions,
      host: turns.host,
      background,
      workspaceRoot: workspace,
      routeOf: (sessionId) => scheduledRouteOf(store, turns.sessions, sessionId),
      slotCacheDir,
      source: coreSource,
      toolNames: () => turns.tools.names(),
      onSlotModule: (load) =>
        logger.info(
          `slot module ${load.slotId}: ${load.source === 'cache' ? 'from the cache' : load.source} in ${Math.round(load.ms)} ms`,
          {
            slotId: load.slotId,
            source: load.source,
            ms: Math.round(load.ms * 10) / 10,
            ...(load.file ? { file: load.file } : {}),
          },
        ),
    });
    // Slot modules are imported before the first turn, not under load (where a first import can outlast a
    // short slot timeout). A module that cannot be imported fails its slot runs as before.
    const preloading = performance.now();
    const failures = await slotHooks.preload();
    const preloadMs = Math.round((performance.now() - preloading) * 10) / 10;
    logger.info(`slot modules of core ${core.id} loaded in ${Math.round(preloadMs)} ms`, {
      coreId: core.id,
      modules: core.slots.size,
      failed: failures.length,
      ms: preloadMs,
    });
    for (const failure of failures) {
      logger.error(
        describeFailure({ name: `importing slot ${failure.slotId} of core ${core.id}`, error: failure.error }),
      );
    }
    worker = new RuntimeTaskWorker({
      store,
      clock,
      ids,
      controlPlane: turns.controlPlane,
      host: owner,
      artifactsDir: join(home, 'runtime', 'artifacts'),
      graceMs: config.tasks.grace_ms,
      isHostAlive: hostAlive,
      handlers: Object.assign(handlers, {
        'terminal.exec': terminalExecHandler,
        'agent.spawn': createAgentSpawnHandler({
          sessions: turns.sessions,
          ids,
          engine: () => turns.engine,
          coreId: core.id,
        }),
        'evolver.run': createEvolverRunHandler({
          store,
          isHostAlive: hostAlive,
          // A claim of evolve:<core> whose host is gone: its task is settled here (the worker's orphan cancel).
          settleOrphan: (ref, reason) => worker!.cancel(ref, reason),
          sessions: turns.sessions,
          ids,
          engine: () => turns.engine,
          source: coreSource,
          home,
          slotCacheDir,
        }),
      }),
    } as ConstructorParameters<typeof RuntimeTaskWorker>[0]);
    // Injected handlers replace the built-in ones of their kind (the worker reads `handlers` on each use).
    Object.assign(handlers, options.taskHandlers ?? {});
    // An evolve's working copy goes once its task's ending (and what it proposed) is recorded.
    worker.onCompletion((task) => {
      if (task.kind !== 'evolver.run') return;
      discardEvolveCopy(home, task.taskId).catch((error: unknown) =>
        logger.error(describeFailure({ name: `removing the working copy of evolve ${task.taskId}`, error })),
      );
    });
    const scheduler = createScheduler({
      store,
      clock,
      ids,
      owner,
      core,
      turns,
      workLeaseMs: config.leases.work_ms,
      // Each tick reads the schedules of the current revision (the working copy while there is none).
      schedules: async () => loadSchedules((await coreSource.current()).core.dir),
    });
    const pushes$ = new Subject<OperatorPush>();
    const operatorAdapter = createOperatorAdapter();
    operatorAdapter.attach((d) => {
      pushes$.next({
        event: 'operator.deliver',
        payload: { delivery_id: d.deliveryId, session_id: d.sessionId, message_id: d.messageId, text: d.text },
      });
      return { externalRef: `operator:${d.deliveryId}` };
    });
    const webhook = config.delivery.webhook
      ? createWebhookAdapter({ url: config.delivery.webhook.url, timeoutMs: config.delivery.webhook.timeout_ms })
      : undefined;
    const router = new HostRouter([operatorAdapter, ...(webhook ? [webhook] : [])]);
    const delivery = new DeliveryRuntime({ store, clock, ids, work: turns.work, router, owner });
    if (testHooks.injectedBug === 'ack-before-commit') injectAckBeforeCommit(turns.engine);
    return {
      damaged$,
      home,
      config,
      store,
      clock,
      ids,
      owner,
      logger,
      provider,
      core,
      coreSource,
      workspace,
      turns,
      worker,
      scheduler,
      background,
      delivery,
      router,
      operatorAdapter,
      webhook,
      pushes$,
      mcp,
      isHostAlive: hostAlive,
    };
  } catch (err) {
    await mcp?.close('the host failed to start');
    await store.close();
    throw err;
  }
}
