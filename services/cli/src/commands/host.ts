import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { DamagedStoreError } from '@demiurge/event-store';
import {
  type ConfigOverrides,
  createLogger,
  type DashboardServer,
  DEFAULT_HTTP_ADDR,
  DemiurgeApp,
  parseHttpAddress,
  runtimeDir,
  serveDashboard,
  serveGatewaySocket,
  serveGatewayStdio,
  startTelemetry,
} from '@demiurge/host';
import { GatewayAlreadyRunningError, operatorSocketPath } from '@demiurge/operator';
import { ExitCode } from '../cli-errors.js';
import { shorten, shortJson } from '../format.js';
import type { HomePaths } from '../home.js';
import type { CommandIo } from '../io.js';
import { grantCommand } from './approvals.js';
import { closeWithin } from './close-within.js';
import { type ClosedHost, type LeftTask, openTurnClient, type PendingApproval, type Reply } from './host-client.js';

export interface HostFlags {
  readonly provider?: 'fake' | 'openai';
  readonly model?: string;
  readonly fakeScript?: string;
  readonly core?: string;
  readonly workspace?: string;
}

export function overridesOf(flags: HostFlags): ConfigOverrides {
  return {
    ...(flags.provider ? { provider: flags.provider } : {}),
    ...(flags.model ? { model: flags.model } : {}),
    ...(flags.fakeScript ? { fakeScript: flags.fakeScript } : {}),
    ...(flags.core ? { core: flags.core } : {}),
    ...(flags.workspace ? { workspace: flags.workspace } : {}),
  };
}

/**
 * `stopped` resolves when the process is asked to stop (SIGINT, SIGTERM) or `extra` resolves; `dispose` stops
 * listening (a host that failed to start).
 */
function stopSignal(io: CommandIo, extra?: Promise<unknown>): { stopped: Promise<string>; dispose: () => void } {
  let dispose: (() => void) | undefined;
  const stopped = new Promise<string>((resolve) => {
    dispose = io.onStop?.((reason) => resolve(reason));
    void extra?.then(() => {
      dispose?.();
      resolve('shutdown requested');
    });
  });
  return { stopped, dispose: () => dispose?.() };
}

/** `demiurge serve`: the host daemon with the socket gateway, until SIGINT/SIGTERM or operator.shutdown. */
export async function serveCommand(
  paths: HomePaths,
  flags: HostFlags & { json?: boolean; logJson?: boolean; http?: string | boolean },
  io: CommandIo,
): Promise<ExitCode> {
  // Refused before the host starts: a second host would run recovery beside the serving one.
  const socket = operatorSocketPath(paths.home);
  if (existsSync(socket) && (await accepts(socket))) throw new GatewayAlreadyRunningError(socket);
  // A bad --http address is refused before the host starts (a bad http.addr is refused by the config check).
  if (typeof flags.http === 'string') parseHttpAddress(flags.http);
  // Spans, trace ids in the log and metrics over OTLP/HTTP when OTEL_* asks for them (nothing is loaded otherwise).
  const telemetry = await startTelemetry();
  const app = await DemiurgeApp.start({
    home: paths.home,
    overrides: overridesOf(flags),
    ...(flags.logJson ? { logger: createLogger({ format: 'json', level: 'info' }) } : {}),
    ...(telemetry ? { telemetry } : {}),
  }).catch(async (err: unknown) => {
    await telemetry?.close();
    throw err;
  });
  if (flags.logJson) app.logger.info('host started', { home: paths.home, owner: app.owner });
  let shutdown!: () => void;
  const requested = new Promise<void>((r) => {
    shutdown = r;
  });
  // A store that stops on damage met in use refuses every call from then on: the host stops too (exit 1).
  let damage: DamagedStoreError | undefined;
  const damaged = app.damaged.then((error) => {
    damage = error;
  });
  // Listening for SIGINT/SIGTERM before the socket accepts: a stop asked for as soon as it does is a drain too.
  const { stopped, dispose } = stopSignal(io, Promise.race([requested, damaged]));
  let server: Awaited<ReturnType<typeof serveGatewaySocket>>;
  let dashboard: DashboardServer | undefined;
  try {
    server = await serveGatewaySocket(app, { onShutdown: shutdown });
    const addr =
      typeof flags.http === 'string'
        ? flags.http
        : flags.http
          ? (app.config.http?.addr ?? DEFAULT_HTTP_ADDR)
          : app.config.http?.addr;
    if (addr) {
      dashboard = await serveDashboard(app, { addr, tokenPath: join(runtimeDir(paths.home), 'http.token') }).catch(
        async (err: unknown) => {
          await server.close('host closing');
          throw err;
        },
      );
    }
  } catch (err) {
    dispose();
    await app.close();
    await telemetry?.close();
    throw err;
  }
  const closeSurfaces = (reason: string) => Promise.all([dashboard?.close(), server.close(reason)]);
  const closeAll = async (reason: string) => {
    const code = await closeWithin(app, () => closeSurfaces(reason), io);
    await telemetry?.close();
    return code;
  };
  const ready = {
    ready: true,
    home: paths.home,
    socket: operatorSocketPath(paths.home),
    owner: app.owner,
    provider: `${app.provider.name}/${app.provider.model}`,
    core: app.coreDir,
    ...(dashboard ? { http: dashboard.url, login: dashboard.loginUrl } : {}),
  };
  io.out(flags.json ? JSON.stringify(ready) : `demiurge: serving ${paths.home} on ${ready.socket} (host ${app.owner})`);
  if (dashboard && !flags.json) io.out(`demiurge: dashboard at ${dashboard.url}; open ${dashboard.loginUrl}`);
  const why = await stopped;
  if (damage) {
    io.err(`demiurge: ${damage.message}; the host stops. Run "demiurge doctor" for a full check`);
    await closeAll('host closing: damaged store');
    return ExitCode.failure;
  }
  io.err(`demiurge: closing (${why}): admission closed, draining`);
  return closeAll('host closing');
}

/** Whether something accepts connections on the unix socket `path` (a live gateway). */
function accepts(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect({ path });
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

/** `demiurge gateway --stdio`: the operator protocol over stdin/stdout, on an in-process host. */
export async function gatewayCommand(paths: HomePaths, flags: HostFlags, io: CommandIo): Promise<ExitCode> {
  const app = await DemiurgeApp.start({ home: paths.home, overrides: overridesOf(flags) });
  let shutdown!: () => void;
  const requested = new Promise<void>((r) => {
    shutdown = r;
  });
  const server = serveGatewayStdio(app, { input: process.stdin, output: process.stdout }, { onShutdown: shutdown });
  // Stdin is the protocol here: its end means "answer what I sent", not "stop" (only a signal stops).
  const signal = signalStop().then((why) => io.err(`demiurge: gateway closing (${why})`));
  await Promise.race([server.closed, requested, signal]);
  await server.close('host closing');
  await app.close();
  return ExitCode.ok;
}

/** Resolves at SIGINT or SIGTERM (for commands whose stdin is not a stop signal). */
function signalStop(): Promise<string> {
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolve(signal);
    };
    const onInt = () => stop('SIGINT');
    const onTerm = () => stop('SIGTERM');
    process.once('SIGINT', onInt);
    process.once('SIGTERM', onTerm);
  });
}

function printReply(reply: Reply, json: boolean | undefined, io: CommandIo): void {
  if (json) io.out(JSON.stringify(reply));
  else if (reply.status === 'completed') io.out(reply.text);
  else
    io.err(`demiurge: the turn ${reply.status}${reply.error ? `: ${reply.error.code}: ${reply.error.message}` : ''}`);
}

function describeCall(a: PendingApproval): string {
  // The reason is written for the model; its first clause is what a person needs ("plan mode denies ...").
  const why = a.reason.split(/[.:](\s|$)/)[0] ?? a.reason;
  return `${a.tool ?? 'an action'} ${shortJson(a.arguments ?? {}, 120)} (${shorten(why, 80)})`;
}

/** What a run that waits for an approval prints (stderr): the id and the exact command that grants it. */
function approvalNotice(a: PendingApproval, home: string): string[] {
  return [
    `demiurge: run ${a.runId} waits for approval ${a.approvalId}: ${describeCall(a)}`,
    `demiurge: grant it with: ${grantCommand(a.approvalId, home)}   (or deny: ${grantCommand(a.approvalId, home).replace(' grant ', ' deny ')})`,
  ];
}

/** Says which detached tasks closing the in-process host cancelled or left queued, and how to keep them. */
function reportLeftTasks(closed: ClosedHost, home: string, io: CommandIo): void {
  const list = (tasks: readonly LeftTask[]) =>
    tasks.map((t) => `${t.taskId} (${t.kind}: ${shorten(t.title, 60)})`).join(', ');
  const n = (count: number) => `${count} detached task${count === 1 ? '' : 's'}`;
  const { cancelledTasks: cancelled, queuedTasks: queued } = closed;
  if (cancelled.length > 0)
    io.err(`demiurge: closing the in-process host cancelled ${n(cancelled.length)}: ${list(cancelled)}`);
  if (queued.length > 0)
    io.err(
      `demiurge: ${n(queued.length)} did not start and ${queued.length === 1 ? 'waits' : 'wait'} for the next host on this home: ${list(queued)}`,
    );
  if (cancelled.length + queued.length > 0)
    io.err(
      `demiurge: to keep detached tasks running, start "demiurge serve --home ${home}" first (run and chat then go through it), or pass --wait to wait for them`,
    );
}

/** `demiurge run <text>`: one turn, through a serving host's gateway or a host in this process. */
export async function runCommand(
  paths: HomePaths,
  text: string,
  flags: HostFlags & { session?: string; plan?: boolean; wait?: boolean; json?: boolean },
  io: CommandIo,
): Promise<ExitCode> {
  const client = await openTurnClient(paths.home, overridesOf(flags));
  let failed = true;
  try {
    const reply = await client.send(text, {
      ...(flags.session ? { sessionId: flags.session } : {}),
      ...(flags.plan ? { plan: true } : {}),
      onApproval: (a) => {
        for (const line of approvalNotice(a, paths.home)) io.err(line);
      },
    });
    if (flags.wait) await client.waitForTasks(reply.sessionId);
    printReply(reply, flags.json, io);
    failed = false;
    return reply.status === 'completed' ? ExitCode.ok : ExitCode.failure;
  } finally {
    const closed = await client.close();
    if (!failed) reportLeftTasks(closed, paths.home, io);
  }
}

/**
 * `demiurge chat`: an operator session on the default core. On a terminal it prompts, and asks (y/n) when a
 * call waits for an approval; with piped stdin it reads one message per line (`echo hi | demiurge chat`),
 * prints how to grant a waiting call, and ends at the end of input.
 */
export async function chatCommand(
  paths: HomePaths,
  flags: HostFlags & { session?: string; plan?: boolean; json?: boolean },
  io: CommandIo,
): Promise<ExitCode> {
  const client = await openTurnClient(paths.home, overridesOf(flags));
  const tty = Boolean(process.stdin.isTTY);
  let sessionId = flags.session;
  let failed = false;
  let ended = false;
  try {
    if (tty) io.err(`demiurge chat (${client.via}); end with Ctrl-D`);
    const lines = createInterface({ input: process.stdin, terminal: tty, ...(tty ? { output: process.stderr } : {}) });
    // One question at a time: a second pending call is asked once the first is answered.
    let asking: Promise<void> = Promise.resolve();
    const ask = (a: PendingApproval) => {
      asking = asking.then(
        () =>
          new Promise<void>((answered) => {
            const question = () =>
              lines.question(`approve ${describeCall(a)}? (y/n) `, (answer) => {
                const yes = /^y(es)?$/i.test(answer.trim());
                const no = /^no?$/i.test(answer.trim());
                if (!yes && !no) return question();
                client.decide(a.approvalId, yes ? 'grant' : 'deny').then(
                  () => io.err(`demiurge: approval ${a.approvalId} ${yes ? 'granted' : 'denied'}`),
                  (err: Error) => io.err(`demiurge: approval ${a.approvalId}: ${err.message}`),
                );
                answered();
              });
            question();
          }),
      );
    };
    if (tty) {
      lines.setPrompt('> ');
      lines.prompt();
    }
    for await (const line of lines) {
      const text = line.trim();
      if (text) {
        const reply = await client.send(text, {
          ...(sessionId ? { sessionId } : {}),
          ...(flags.plan ? { plan: true } : {}),
          onApproval: (a) => {
            if (tty) ask(a);
            else for (const notice of approvalNotice(a, paths.home)) io.err(notice);
          },
        });
        sessionId = reply.sessionId;
        if (reply.status !== 'completed') failed = true;
        printReply(reply, flags.json, io);
      }
      if (tty) lines.prompt();
    }
    ended = true;
    return failed ? ExitCode.failure : ExitCode.ok;
  } finally {
    const closed = await client.close();
    if (ended) reportLeftTasks(closed, paths.home, io);
  }
}
