import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DemiurgeError } from '@demiurge/contracts';
import { type DemiurgeApp, watchRunCommands } from '@demiurge/host';
import { deliveryStatusPrefix, outboxReader } from '@demiurge/projector-outbox';
import { taskBoardReader } from '@demiurge/projector-task-board';
import { type CheckedStore, StepChecker } from './checks.js';
import { describeAction, type SimAction } from './scenario.js';
import {
  prepareSimStore,
  SIM_CONFIG,
  type SimPorts,
  type SimStore,
  simPorts,
  startSimHost,
  storesBusy,
} from './sim-host.js';
import { planText, type SimBug, SimWorld, SLOW_TIMEOUT_S } from './sim-world.js';

/** How scenarios run. */
export interface SimulatorOptions {
  /** The Agent Core directory to run (default: the bundled `agent/`). */
  readonly core?: string;
  /**
   * Where each scenario's home (its SQLite file) is made; default `/dev/shm` where it exists (a memory file
   * system: a simulated crash needs no disk, and file creation costs no fsync), else the OS temp dir.
   * Each home is removed after its run.
   */
  readonly dir?: string;
  /** A deliberately injected bug, to prove the checks catch it. */
  readonly bug?: SimBug;
  /**
   * When every projection is compared with a rebuild from the log: after every `step` (default), or only at
   * the `end` of each scenario (much cheaper for long batches; the other checks still run after every step).
   */
  readonly rebuild?: 'step' | 'end';
  /** Keep each scenario's home (to read its log with `demiurge events --home <home>`); its path is in the result. */
  readonly keep?: boolean;
  /**
   * The store scenarios run on: a fresh SQLite file each (default), or `{ kind: 'postgres', url }`, a fresh
   * schema each in that database (dropped after the run unless `keep`). The checks are the same on both.
   */
  readonly store?: SimStore;
}

/** One scenario's outcome: the log's hash and size, and the first failed check (with the step that broke it). */
export interface ScenarioResult {
  readonly seed: number;
  readonly actions: readonly SimAction[];
  readonly hash: string;
  readonly events: number;
  /** How many events of each type its log has (what it exercised: `run.paused`, `approval.expired`, ...). */
  readonly eventTypes: Readonly<Record<string, number>>;
  /** The scenario's home, when kept ({@link SimulatorOptions.keep}). */
  readonly home?: string;
  /** On PostgreSQL, when kept: the URL of the scenario's schema (`DEMIURGE_STORE_URL=<it> demiurge events`). */
  readonly storeUrl?: string;
  readonly failure?: { readonly step: number; readonly action: string; readonly problems: readonly string[] };
}

/** The live hosts of a scenario; `frozen` ones were cut off (a partitioned host a second one takes over from). */
interface HostSlot {
  app: DemiurgeApp;
  frozen: boolean;
  /** The host's run-command watcher (as a serving host's): continues a run resumed while no engine drives it. */
  commands: { close(): Promise<void> };
}

/**
 * Runs one scenario of the real runtime, step by step: each action, then the runtime settles (every promise it
 * started has run as far as it can without time passing), then every check. Stops at the first failed check.
 */
export async function runScenario(
  seed: number,
  actions: readonly SimAction[],
  options: SimulatorOptions = {},
): Promise<ScenarioResult> {
  const base = options.dir ?? (existsSync('/dev/shm') ? '/dev/shm' : tmpdir());
  mkdirSync(base, { recursive: true });
  const home = mkdtempSync(join(base, 'demiurge-sim-'));
  writeFileSync(join(home, 'config.yaml'), SIM_CONFIG);
  const store = await prepareSimStore(options.store, base, home).catch((err: unknown) => {
    rmSync(home, { recursive: true, force: true });
    throw err;
  });
  const ports = simPorts(seed);
  const world = new SimWorld(options.bug, ports.timers);
  const sim = new Scenario(home, options.core, ports, world, store.url);
  const checker = new StepChecker();
  const rebuildEveryStep = (options.rebuild ?? 'step') === 'step';
  const result = (failure?: ScenarioResult['failure']): ScenarioResult => ({
    seed,
    actions,
    hash: checker.digest(),
    events: checker.events,
    eventTypes: Object.fromEntries(checker.eventTypes),
    ...(options.keep ? { home } : {}),
    ...(options.keep && store.url ? { storeUrl: store.url } : {}),
    ...(failure ? { failure } : {}),
  });
  try {
    await sim.start();
    for (const [step, action] of actions.entries()) {
      const last = step === actions.length - 1;
      let problems: string[];
      try {
        await sim.apply(action);
        problems = sim.takeErrors();
        problems.push(
          ...(await checker.check(sim.store as CheckedStore, world, { runs: sim.admitted }, ports.clock.now(), {
            rebuild: rebuildEveryStep || last,
          })),
        );
      } catch (err) {
        problems = [`unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`];
      }
      if (problems.length > 0) return result({ step, action: describeAction(action), problems });
    }
    return result();
  } finally {
    await sim.close();
    if (!options.keep) {
      rmSync(home, { recursive: true, force: true });
      await store.dispose();
    }
  }
}

class Scenario {
  private readonly hosts: HostSlot[] = [];
  private started = 0;
  readonly admitted: string[] = [];
  private readonly sessions: string[] = [];
  /** The hosts that crashed: their runs and tasks are recovered at once (a cut-off host is alive: leases decide). */
  private readonly dead = new Set<string>();
  /** What a host's own loops reported (a serving host logs it): a failure of the step that caused it. */
  private readonly errors: string[] = [];

  constructor(
    private readonly home: string,
    private readonly core: string | undefined,
    private readonly ports: SimPorts,
    private readonly world: SimWorld,
    private readonly storeUrl: string | undefined,
  ) {}

  /** The host the simulator drives (the last started, not frozen). */
  get app(): DemiurgeApp {
    const slot = this.hosts.findLast((h) => !h.frozen);
    if (!slot) throw new Error('no live host');
    return slot.app;
  }

  get store() {
    return this.app.store;
  }

  async start(): Promise<void> {
    this.started++;
    const app = await startSimHost({
      home: this.home,
      core: this.core,
      owner: `sim-host-${this.started}`,
      ports: this.ports,
      world: this.world,
      isHostAlive: (owner) => !this.dead.has(owner),
      storeUrl: this.storeUrl,
    });
    const slot: HostSlot = { app, frozen: false, commands: { close: async () => undefined } };
    // The serving host's run-command watcher, without its timed sweep (the `recover` action is that round): a
    // run resumed (or cancelled) while no engine drives it is claimed and continued, as `demiurge serve` does.
    slot.commands = watchRunCommands({
      store: app.store,
      engine: app.runtime.engine,
      runs: app.runtime.runs,
      owner: app.owner,
      clock: app.clock,
      isHostAlive: app.isHostAlive,
      closing: () => slot.frozen,
      track: (outcome) => void outcome.catch(() => undefined),
      onError: (runId, error) =>
        this.errors.push(`unexpected error continuing run ${runId}: ${error instanceof Error ? error.message : error}`),
    });
    this.hosts.push(slot);
    await this.settle();
  }

  /** The errors the hosts' loops reported since the last call. */
  takeErrors(): string[] {
    return this.errors.splice(0);
  }

  /**
   * Lets the runtime run until nothing moves: the log's head stays the same over several turns of the event
   * loop (every step in flight either ended or waits on a simulated call that hangs), and on PostgreSQL no
   * host's store has a statement in flight (its work waits on the server, not on the event loop).
   */
  async settle(): Promise<void> {
    let last = -1;
    let still = 0;
    // Turns spent waiting on the server do not count; a store busy for a minute is as far as it goes.
    const deadline = performance.now() + 60_000;
    for (let i = 0; i < 100_000 && still < 4 && performance.now() < deadline; ) {
      await new Promise((resolve) => setImmediate(resolve));
      // A query of the head while a store waits on the server would queue among the runtime's own statements.
      if (storesBusy(this.hosts.map((h) => h.app.store))) {
        still = 0;
        continue;
      }
      i++;
      const head = await this.store.head();
      still = head === last ? still + 1 : 0;
      last = head;
    }
    await this.app.background.drain(1_000);
  }

  async apply(action: SimAction): Promise<void> {
    await this.perform(action);
    await this.settle();
  }

  private async perform(a: SimAction): Promise<void> {
    const app = this.app;
    switch (a.kind) {
      case 'submit': {
        const n = this.admitted.length + 1;
        const submitted = await app.submit({
          text: planText({ n, tools: a.tools, provider: a.provider }),
          newSession: true,
          ...(a.plan ? { plan: true } : {}),
        });
        submitted.outcome.catch(() => undefined);
        this.admitted.push(submitted.runId);
        this.sessions.push(submitted.sessionId);
        return;
      }
      case 'task': {
        const sessionId = this.sessions.at(-1);
        if (!sessionId) return;
        await refused(
          app.runtime.controlPlane.submitTask({
            sessionId,
            kind: 'terminal.exec',
            title: `sim process ${a.outcome}`,
            input: { command: a.outcome, ...(a.outcome === 'slow' ? { timeoutSeconds: SLOW_TIMEOUT_S } : {}) },
          }),
        );
        await app.worker.runSubmitted();
        return;
      }
      case 'dispatch':
        this.world.flushDeferred();
        this.world.sinkFault = a.sink;
        try {
          await app.dispatchDeliveries();
        } finally {
          this.world.sinkFault = 'ok';
        }
        return;
      case 'advance':
        // The virtual clock moves; the hosts' timers due by then fire (an unanswered approval expires).
        this.ports.timers.advance(a.ms);
        return;
      case 'cancel': {
        const live = await app.liveRuns();
        const run = live[a.pick % Math.max(1, live.length)];
        if (run) await refused(app.runtime.engine.cancel(run.runId, 'cancelled by the simulated operator'));
        return;
      }
      case 'pause': {
        const live = await app.liveRuns();
        const run = live[a.pick % Math.max(1, live.length)];
        if (run) await refused(app.runtime.runs.pause(run.runId, 'paused by the simulated operator'));
        return;
      }
      case 'resume': {
        // A paused run first; else what `demiurge runs resume` also accepts (the run machine refuses the rest).
        const live = await app.liveRuns();
        const paused = live.filter((r) => r.status === 'paused');
        const pool = paused.length > 0 ? paused : live.filter((r) => ['waiting', 'blocked'].includes(r.status));
        const run = pool[a.pick % Math.max(1, pool.length)];
        if (run) await refused(app.runtime.runs.resume(run.runId));
        return;
      }
      case 'cancelTask': {
        const tasks = (await taskBoardReader(app.store).all()).filter((t) =>
          ['created', 'active', 'waiting', 'blocked'].includes(t.status),
        );
        const task = tasks[a.pick % Math.max(1, tasks.length)];
        if (task)
          await refused(
            app.cancelTask({ sessionId: task.sessionId, taskId: task.taskId }, 'cancelled by the simulated operator'),
          );
        return;
      }
      case 'deleteTask': {
        // Any task, in any status: a delete or archive the task machine refuses is a typed refusal.
        const tasks = await taskBoardReader(app.store).all();
        const task = tasks[a.pick % Math.max(1, tasks.length)];
        if (!task) return;
        const ref = { sessionId: task.sessionId, taskId: task.taskId };
        const cp = app.runtime.controlPlane;
        await refused(a.archive ? cp.archiveTask(ref) : cp.deleteTask(ref, 'deleted by the simulated operator'));
        return;
      }
      case 'approve': {
        const open = await app.runtime.approvals.listOpen();
        const approval = open[a.pick % Math.max(1, open.length)];
        if (!approval) return;
        const actor = { kind: 'operator' as const, id: 'sim-operator' };
        const { approvals } = app.runtime;
        await refused(
          a.grant ? approvals.grant(approval.approvalId, actor) : approvals.deny(approval.approvalId, actor),
        );
        return;
      }
      case 'resolve': {
        const outbox = outboxReader(app.store);
        for (const d of await outbox.byStatus.list({ prefix: deliveryStatusPrefix('unknown') })) {
          // The operator asks the other side: delivered means `sent`, not delivered means send it again.
          const decision = this.world.received.has(d.deliveryId) ? 'sent' : 'retry';
          await refused(app.delivery.resolveUnknown(d.deliveryId, decision, { operator: 'sim-operator' }));
        }
        return;
      }
      case 'recover':
        await app.recover(true);
        return;
      case 'schedule':
        // The host's scheduler round, at the virtual time: due instances recorded, then up to 4 fired.
        await app.scheduler.tick();
        await app.scheduler.runDue({ limit: 4 });
        return;
      case 'crash':
        return this.crash(a.restart);
    }
  }

  /**
   * `same`: the host crashes: its store handle closes first (so a continuation still in flight cannot write),
   * then its hanging calls are let go, what it held only in memory is gone, and a new host starts on the same
   * file. `second`: the host is cut off instead (frozen: its store stays open, it is never driven again, and
   * a call of it that hangs may still come back later, with its old lease) and a second host starts beside it.
   */
  private async crash(restart: 'same' | 'second'): Promise<void> {
    const slot = this.hosts.findLast((h) => !h.frozen);
    if (!slot) return;
    slot.frozen = true;
    await slot.commands.close(); // crashed or cut off: it hears no command any more
    if (restart === 'same') {
      await halt(slot.app, 'simulated host crash');
      this.dead.add(slot.app.owner);
      this.world.releaseHangs();
      this.world.deferred.length = 0;
      await new Promise((resolve) => setImmediate(resolve));
      this.hosts.splice(this.hosts.indexOf(slot), 1);
    }
    await this.start();
  }

  async close(): Promise<void> {
    for (const slot of this.hosts) {
      slot.frozen = true;
      await slot.commands.close();
      await halt(slot.app, 'the scenario ended');
    }
    this.world.releaseHangs();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * Stops a host the way a crash does: its store handle closes first, so nothing it still runs can write; then
 * its turns in flight are stopped (their signals abort: a wait on an approval or a call ends, and with it its
 * timer) — what they try to record is refused by the closed store — and its MCP servers stop.
 */
async function halt(app: DemiurgeApp, why: string): Promise<void> {
  await app.store.close().catch(() => undefined);
  await app.runtime.engine.close({ drainMs: 0 }).catch(() => undefined);
  await app.mcp?.close(why).catch(() => undefined);
}

/** Runs an operator command; a typed refusal (the machine said no, already ended, not found) is an answer, not a failure. */
async function refused(command: Promise<unknown>): Promise<void> {
  try {
    await command;
  } catch (err) {
    if (!(err instanceof DemiurgeError)) throw err;
  }
}
