import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type CheckProblem,
  COMMIT_TRACE_ENV,
  CRASH_AT_COMMIT_ENV,
  type CrashPoint,
  type CrashPointDriver,
  formatCrashPoint,
  INJECT_BUG_ENV,
  type PointRun,
  parseCommitTrace,
} from '@demiurge/crash-sweep';
import { DEFAULT_CORE_DIR } from '@demiurge/host';
import { connectOperator, type OperatorClient } from '@demiurge/operator';
import { readCoreId } from '../core-dir.js';
import { effectChecks } from './effect-checks.js';
import { type HostProcess, startHost } from './host-process.js';
import { openItems, turnEnd } from './settle.js';
import { type Home, type HomeConfig, seedWebhookSessions, writeHome } from './sweep-home.js';
import { SweepLog } from './sweep-log.js';
import { verifyHome } from './verify-home.js';
import { startWebhookSink, type WebhookSink } from './webhook-sink.js';

/** A submit the gateway answered: its session, run and turn must be in the log from then on. */
export interface Ack {
  /** 1: answered by the first host; 2: by the restarted one. */
  readonly cycle: number;
  readonly session_id: string;
  readonly run_id: string;
  readonly turn_id: string;
}

/** What a scenario's steps see: the live host's gateway, the log, what was acknowledged so far. */
export interface DriveContext {
  readonly home: Home;
  /** The home's log and read models (async reads, next to the serving host). */
  readonly log: SweepLog;
  /** Every submit the gateway answered (appended to by {@link DriveContext.submit}). */
  readonly acks: Ack[];
  /** The scenario's own notes across the restart (ids, what was acknowledged). */
  readonly state: Record<string, string | undefined>;
  /** False in the first host process, true after the crash and restart. */
  readonly restarted: boolean;
  readonly sink: WebhookSink | undefined;
  /** A gateway client of the current host (one per host process). */
  gateway(): Promise<OperatorClient>;
  /** `operator.submit`; its answer is recorded in `acks`. */
  submit(text: string, sessionId?: string): Promise<Ack>;
  /** Polls `probe` until it returns a value; throws when the host that was current at the call died meanwhile. */
  until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms?: number): Promise<T>;
}

/** A scripted scenario for the real host: its home, its operator steps, when it is done and its own checks. */
export interface HostScenario {
  readonly name: string;
  /** The home's configuration (webhook URL and core are the driver's). */
  readonly config: Omit<HomeConfig, 'webhookUrl' | 'core'>;
  /** A counting webhook receiver is started and configured. */
  readonly webhook?: boolean;
  /** Writes what the scenario needs into its copy of the core (schedules). */
  readonly prepareCore?: (coreDir: string) => void;
  /** Runs while no host serves the home, before the first start (seeded sessions go to `state`). */
  readonly seed?: (seeding: SeedContext) => Promise<void>;
  /** The operator's steps; run again after a restart (`restarted`): re-send what was not acknowledged. */
  readonly drive: (ctx: DriveContext) => Promise<void>;
  /** The scenario reached its end (besides nothing being in motion); absent: nothing more to wait for. */
  readonly done?: (ctx: DriveContext) => Promise<boolean>;
  /** Its own checks once settled. */
  readonly check?: (ctx: DriveContext) => Promise<CheckProblem[]>;
}

/** What a scenario's `seed` gets: the home no host serves yet, its notes, sessions it can create. */
export interface SeedContext {
  readonly home: Home;
  readonly state: Record<string, string | undefined>;
  /** Creates `count` sessions bound to the `webhook` channel (of the swept core) and returns their ids. */
  webhookSessions(count: number): Promise<string[]>;
}

export interface HostDriverOptions {
  /** Injected into the first host's environment (`DEMIURGE_INJECT_BUG`). */
  readonly injectBug?: string;
  /** How long a run may take to settle after its last start (default 45 s). */
  readonly settleMs?: number;
  /** Keep each run's directory (its core, home and commit trace): `true` every run's, `'failing'` those with a problem. */
  readonly keep?: boolean | 'failing';
  /** Told where a kept run's directory is (`crash` undefined: the counting run). */
  readonly onKept?: (dir: string, crash: CrashPoint | undefined) => void;
}

class HostGone extends Error {}

/**
 * The real-process driver of the crash-point sweep: each run writes a fresh home (a copy of the core), starts
 * `demiurge serve` with the commit trace on (and `DEMIURGE_CRASH_AT_COMMIT` for a crash point), drives the
 * scenario through the gateway, restarts the host once it killed itself, waits until nothing is in motion, stops
 * it with SIGTERM and checks: `demiurge verify`, acknowledged submits present, no delivery or tool effect twice,
 * nothing recorded sent that the receiver never got, and the scenario's own checks.
 */
export function hostDriver(options: HostDriverOptions = {}): CrashPointDriver<HostScenario> {
  return { run: (scenario, crash, context) => runScenario(scenario, crash, context.coreDir, options) };
}

async function runScenario(
  scenario: HostScenario,
  crash: CrashPoint | undefined,
  coreDir: string | undefined,
  options: HostDriverOptions,
): Promise<PointRun> {
  const dir = mkdtempSync(join(tmpdir(), `demiurge-sweep-${scenario.name}-`));
  const sink = scenario.webhook ? await startWebhookSink(() => 0) : undefined;
  const core = join(dir, 'core');
  cpSync(coreDir ?? DEFAULT_CORE_DIR, core, { recursive: true });
  scenario.prepareCore?.(core);
  const home = writeHome(join(dir, 'home'), {
    ...scenario.config,
    core,
    ...(sink ? { webhookUrl: sink.url } : {}),
  });
  const trace = join(dir, 'commits.jsonl');
  const log = new SweepLog(home.db);
  const state: Record<string, string | undefined> = {};
  const problems: CheckProblem[] = [];
  let host: HostProcess | undefined;
  let client: OperatorClient | undefined;
  const stderr: string[] = [];
  try {
    await scenario.seed?.({
      home,
      state,
      webhookSessions: (count) => seedWebhookSessions(home, count, readCoreId(core)),
    });
    const firstEnv = {
      [COMMIT_TRACE_ENV]: trace,
      ...(crash ? { [CRASH_AT_COMMIT_ENV]: formatCrashPoint(crash) } : {}),
      ...(options.injectBug ? { [INJECT_BUG_ENV]: options.injectBug } : {}),
    };
    const ctx = {
      home,
      log,
      acks: [] as Ack[],
      state,
      restarted: false,
      sink,
      async gateway() {
        if (!host) throw new HostGone('no host');
        client ??= await openGateway(host.ready.socket);
        return client;
      },
      async submit(text: string, sessionId?: string) {
        const c = await ctx.gateway();
        const ids = await c.request('operator.submit', { text, ...(sessionId ? { session_id: sessionId } : {}) });
        const ack = {
          cycle: ctx.restarted ? 2 : 1,
          session_id: ids.session_id,
          run_id: ids.run_id,
          turn_id: ids.turn_id,
        };
        ctx.acks.push(ack);
        return ack;
      },
      async until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 30_000) {
        const current = host;
        const deadline = Date.now() + ms;
        for (;;) {
          const value = await probe();
          if (value !== undefined) return value;
          if (host !== current || !current || exitedNow(current))
            throw new HostGone(`the host died waiting for ${what}`);
          if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
          await sleep(50);
        }
      },
    };
    /** The first host wrote its crash line: it is dead or dying (the line is written right before the SIGKILL). */
    const crashed = () =>
      crash !== undefined && !ctx.restarted && parseCommitTrace(readTrace(trace)).crash !== undefined;
    /** One host process: start, drive, wait until settled; false when it died (crashed) before that. */
    const serve = async (env: NodeJS.ProcessEnv): Promise<boolean> => {
      try {
        host = await startHost(home.dir, { cwd: home.workspace, env });
      } catch (err) {
        // Killed at a commit of its start (recovery): it never printed its ready line.
        if (crashed()) return false;
        throw err;
      }
      const current = host;
      void current.exited.then(() => gone.add(current));
      client = undefined;
      const driving = scenario.drive(ctx).then(
        () => 'driven' as const,
        (err: unknown) => err,
      );
      const first = await Promise.race([driving, current.exited.then(() => 'exited' as const)]);
      if (first === 'exited' || crashed()) return false;
      if (first !== 'driven') {
        if (exitedNow(current) || first instanceof HostGone) return false;
        problems.push({ check: 'scenario ran', detail: describe(first) });
      }
      const deadline = Date.now() + (options.settleMs ?? 45_000);
      for (;;) {
        if (exitedNow(current) || crashed()) return false;
        // Every acknowledged turn must have ended too (one the host never admitted shows here as not ended).
        const unended: string[] = [];
        for (const a of ctx.acks) {
          if ((await turnEnd(log, a.turn_id)) === undefined) unended.push(`turn ${a.turn_id} has not ended`);
        }
        const open = [...unended, ...(await openItems(log))];
        if (open.length === 0 && ((await scenario.done?.(ctx)) ?? true)) return true;
        if (Date.now() > deadline) {
          const waiting = open.length > 0 ? open.slice(0, 5).join('; ') : 'the scenario is not done';
          problems.push({ check: 'scenario settled', detail: waiting });
          return true;
        }
        await sleep(100);
      }
    };
    let settled = await serve(firstEnv);
    if (!settled) {
      await host?.exited;
      if (host) stderr.push(host.stderr());
      await client?.close().catch(() => undefined);
      ctx.restarted = true;
      settled = await serve({});
      if (!settled) problems.push({ check: 'restarted host kept running', detail: `it exited: ${host?.stderr()}` });
    }
    /** Closes the gateway client and stops the host with SIGTERM: its exit, undefined when none was running. */
    const stopGracefully = async () => {
      await client?.close().catch(() => undefined);
      client = undefined;
      const exit = await host?.stop('SIGTERM');
      if (host) stderr.push(host.stderr());
      host = undefined;
      return exit;
    };
    let exit = await stopGracefully();
    if (settled && exit?.signal === 'SIGKILL' && crashed()) {
      // The crash point fell in the first host's shutdown: this run batched its appends into fewer commits before
      // it settled than the run the points were planned from, so the commit counted was one the stop made. A crash
      // like any other: restarted, left to settle, stopped again.
      ctx.restarted = true;
      settled = await serve({});
      if (!settled) problems.push({ check: 'restarted host kept running', detail: `it exited: ${host?.stderr()}` });
      exit = await stopGracefully();
    }
    if (exit && exit.code !== 0 && settled) {
      problems.push({ check: 'graceful stop', detail: `demiurge serve exited ${exit.code ?? exit.signal}` });
    }
    problems.push(...(await verifyHome(home.dir)));
    problems.push(...(await effectChecks(ctx)));
    problems.push(...((await scenario.check?.(ctx)) ?? []));
    for (const text of stderr) {
      if (/unexpected error/i.test(text)) problems.push({ check: 'no unexpected error', detail: lastLines(text) });
    }
    return { trace: parseCommitTrace(readTrace(trace)), problems };
  } finally {
    await client?.close().catch(() => undefined);
    await host?.stop('SIGKILL');
    await log.close();
    await sink?.close();
    const keep = options.keep === true || (options.keep === 'failing' && problems.length > 0);
    if (keep) options.onKept?.(dir, crash);
    else rmSync(dir, { recursive: true, force: true });
  }
}

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** Connects to a serving host's gateway and performs the handshake. */
async function openGateway(socket: string): Promise<OperatorClient> {
  const client = await connectOperator(socket);
  try {
    await client.request('operator.initialize', {
      protocol_version: 1,
      client: { name: 'crash-sweep', version: '0.1.0' },
    });
  } catch (err) {
    await client.close();
    throw err;
  }
  return client;
}

/** Host processes whose exit was seen. */
const gone = new WeakSet<HostProcess>();

function exitedNow(host: HostProcess): boolean {
  return gone.has(host);
}

function readTrace(path: string): string {
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function lastLines(text: string): string {
  return text.trim().split('\n').slice(-3).join(' | ');
}
