import { createInterface } from 'node:readline';
import { type ConfigOverrides, DemiurgeApp, serveGatewaySocket, serveGatewayStdio } from '@demiurge/host';
import { operatorSocketPath } from '@demiurge/operator';
import { ExitCode } from '../cli-errors.js';
import type { HomePaths } from '../home.js';
import type { CommandIo } from '../io.js';
import { openTurnClient, type Reply } from './host-client.js';

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

/** Resolves when the process is asked to stop (SIGINT, SIGTERM) or `extra` resolves. */
function stopSignal(io: CommandIo, extra?: Promise<unknown>): Promise<string> {
  return new Promise((resolve) => {
    const dispose = io.onStop?.((reason) => resolve(reason));
    void extra?.then(() => {
      dispose?.();
      resolve('shutdown requested');
    });
  });
}

/** `demiurge serve`: the host daemon with the socket gateway, until SIGINT/SIGTERM or operator.shutdown. */
export async function serveCommand(
  paths: HomePaths,
  flags: HostFlags & { json?: boolean },
  io: CommandIo,
): Promise<ExitCode> {
  const app = await DemiurgeApp.start({ home: paths.home, overrides: overridesOf(flags) });
  let shutdown!: () => void;
  const requested = new Promise<void>((r) => {
    shutdown = r;
  });
  let server: Awaited<ReturnType<typeof serveGatewaySocket>>;
  try {
    server = await serveGatewaySocket(app, { onShutdown: shutdown });
  } catch (err) {
    await app.close();
    throw err;
  }
  const ready = {
    ready: true,
    home: paths.home,
    socket: operatorSocketPath(paths.home),
    owner: app.owner,
    provider: `${app.provider.name}/${app.provider.model}`,
    core: app.coreDir,
  };
  io.out(flags.json ? JSON.stringify(ready) : `demiurge: serving ${paths.home} on ${ready.socket} (host ${app.owner})`);
  const why = await stopSignal(io, requested);
  io.err(`demiurge: closing (${why}): admission closed, draining`);
  return closeWithin(app, () => server.close('host closing'), io);
}

/**
 * Closes the gateway and the host within the configured `shutdown.deadline_ms`. Past it, says on stderr what
 * the close still waits for (phase, runs, tasks, deliveries, background work) and ends the process with
 * status 1 even though that work holds it open: the next host start recovers what was left.
 */
async function closeWithin(app: DemiurgeApp, closeGateway: () => Promise<unknown>, io: CommandIo): Promise<ExitCode> {
  const deadlineMs = app.config.shutdown.deadline_ms;
  const closed = (async () => {
    await closeGateway();
    await app.close();
  })();
  let timer: NodeJS.Timeout | undefined;
  const overran = await Promise.race([
    closed.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), deadlineMs);
    }),
  ]);
  clearTimeout(timer);
  if (!overran) return ExitCode.ok;
  io.err(
    `demiurge: shutdown did not finish within ${deadlineMs} ms (shutdown.deadline_ms); still waiting for ${await app.closeStatus()}`,
  );
  io.err('demiurge: exiting now; the next host start recovers what was left');
  // What the close waits for keeps the event loop alive: end the process once the message is out.
  setTimeout(() => process.exit(ExitCode.failure), 100).unref();
  return ExitCode.failure;
}

/** `demiurge gateway --stdio`: the operator protocol over stdin/stdout, on an in-process host. */
export async function gatewayCommand(paths: HomePaths, flags: HostFlags, io: CommandIo): Promise<ExitCode> {
  const app = await DemiurgeApp.start({ home: paths.home, overrides: overridesOf(flags) });
  let shutdown!: () => void;
  const requested = new Promise<void>((r) => {
    shutdown = r;
  });
  const server = serveGatewayStdio(app, { input: process.stdin, output: process.stdout }, { onShutdown: shutdown });
  await Promise.race([server.closed, requested, stopSignal(io)]);
  await server.close('host closing');
  await app.close();
  return ExitCode.ok;
}

function printReply(reply: Reply, json: boolean | undefined, io: CommandIo): void {
  if (json) io.out(JSON.stringify(reply));
  else if (reply.status === 'completed') io.out(reply.text);
  else
    io.err(`demiurge: the turn ${reply.status}${reply.error ? `: ${reply.error.code}: ${reply.error.message}` : ''}`);
}

/** `demiurge run <text>`: one turn, through a serving host's gateway or a host in this process. */
export async function runCommand(
  paths: HomePaths,
  text: string,
  flags: HostFlags & { session?: string; plan?: boolean; wait?: boolean; json?: boolean },
  io: CommandIo,
): Promise<ExitCode> {
  const client = await openTurnClient(paths.home, overridesOf(flags));
  try {
    const reply = await client.send(text, {
      ...(flags.session ? { sessionId: flags.session } : {}),
      ...(flags.plan ? { plan: true } : {}),
    });
    if (flags.wait) await client.waitForTasks(reply.sessionId);
    printReply(reply, flags.json, io);
    return reply.status === 'completed' ? ExitCode.ok : ExitCode.failure;
  } finally {
    await client.close();
  }
}

/**
 * `demiurge chat`: an operator session on the default core. On a terminal it prompts; with piped stdin it
 * reads one message per line (`echo hi | demiurge chat`) and ends at the end of input.
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
  try {
    if (tty) io.err(`demiurge chat (${client.via}); end with Ctrl-D`);
    const lines = createInterface({ input: process.stdin, terminal: tty, ...(tty ? { output: process.stderr } : {}) });
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
        });
        sessionId = reply.sessionId;
        if (reply.status !== 'completed') failed = true;
        printReply(reply, flags.json, io);
      }
      if (tty) lines.prompt();
    }
    return failed ? ExitCode.failure : ExitCode.ok;
  } finally {
    await client.close();
  }
}
