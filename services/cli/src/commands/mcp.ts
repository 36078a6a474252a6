import { serveRuntimeMcpStdio } from '@demiurge/mcp';
import { describeError } from '../cli-errors.js';
import { ExitCode } from '../exit-code.js';
import type { HomePaths } from '../home.js';
import type { CommandIo } from '../io.js';
import { type HostFlags, overridesOf } from './host.js';
import { openTurnClient } from './host-client.js';
import { runsCancel, runsList, runsShow } from './runs.js';
import { statusCommand } from './status.js';
import { tasksCancel, tasksList, tasksShow } from './tasks.js';

const VERSION = '0.1.0';

/** Runs a command's `--json` form with its output captured: the one JSON document it prints. */
async function captured(run: (io: CommandIo) => Promise<unknown>): Promise<unknown> {
  const out: string[] = [];
  await run({ out: (text) => out.push(text), err: () => undefined });
  return JSON.parse(out.join('\n'));
}

/**
 * `demiurge mcp`: the runtime as an MCP server on stdio until the client closes. Every tool is one of the CLI's
 * own commands on this home: `submit_message` is `run` (through a serving host when there is one, else a host in
 * this process for that turn), the reads and `cancel` are `status`, `tasks`/`runs list|show|cancel`. Nothing but
 * the protocol is written on stdout; the host's log goes to stderr.
 */
export async function mcpCommand(paths: HomePaths, flags: HostFlags, _io: CommandIo): Promise<ExitCode> {
  const home = paths.home;
  const json = { home, json: true } as const;
  // Stdout carries the protocol only: anything that logs with console (a slot module of the core) goes to stderr.
  console.log = console.info = console.debug = console.error;
  await serveRuntimeMcpStdio(
    {
      async submitMessage({ text, sessionId, plan }) {
        const client = await openTurnClient(home, overridesOf(flags));
        try {
          const reply = await client.send(text, {
            ...(sessionId ? { sessionId } : {}),
            ...(plan ? { plan: true } : {}),
          });
          return { ...reply, via: client.via };
        } finally {
          await client.close();
        }
      },
      status: () => captured((io) => statusCommand(paths, { json: true }, io)),
      listTasks: ({ sessionId, all }) =>
        captured((io) => tasksList({ ...json, all: all ?? false, ...(sessionId ? { session: sessionId } : {}) }, io)),
      showTask: (taskId) => captured((io) => tasksShow(taskId, json, io)),
      listRuns: ({ sessionId, live }) =>
        captured((io) => runsList({ ...json, live: live ?? false, ...(sessionId ? { session: sessionId } : {}) }, io)),
      showRun: (runId) => captured((io) => runsShow(runId, json, io)),
      cancelRun: (runId, reason) => captured((io) => runsCancel(runId, { ...json, ...(reason ? { reason } : {}) }, io)),
      cancelTask: (taskId, reason) =>
        captured((io) => tasksCancel(taskId, { ...json, ...(reason ? { reason } : {}) }, io)),
      describeError,
    },
    { version: VERSION },
  );
  return ExitCode.ok;
}
