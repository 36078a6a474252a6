import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createIdGenerator, systemClock } from '@demiurge/contracts';
import type { EventStore } from '@demiurge/event-store';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { verifyLog } from '@demiurge/lifecycle';
import { mcpServersProjector } from '@demiurge/projector-mcp-servers';
import type { McpServerSpec } from '@demiurge/slots';
import { ToolOutcomeUnknownError } from '@demiurge/turn-engine';
import { afterEach, describe, expect, it } from 'vitest';
import { McpServers, mcpServerStatus } from '../src/index.js';

const require = createRequire(import.meta.url);
const filesystemServer = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
const everythingServer = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

let dir: string;
let store: EventStore | undefined;
let servers: McpServers | undefined;
afterEach(async () => {
  await servers?.close();
  await store?.close();
  servers = undefined;
  store = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const stdio = (name: string, args: string[], maxRestarts = 5): McpServerSpec => ({
  name,
  transport: 'stdio',
  command: process.execPath,
  args,
  env: {},
  cwd: dir,
  startupTimeoutMs: 30_000,
  maxRestarts,
});

async function open(specs: McpServerSpec[], host = 'host-a'): Promise<McpServers> {
  store ??= await openSqliteEventStore({
    path: join(dir, 'store.sqlite3'),
    projectors: [mcpServersProjector],
    clock: systemClock,
    ids: createIdGenerator(systemClock),
  });
  const ids = createIdGenerator(systemClock);
  const made = new McpServers({
    store,
    clock: systemClock,
    ids,
    host,
    coreId: 'default',
    servers: specs,
    logger: quiet,
    isHostAlive: (h) => h === host,
    backoff: { baseMs: 50, maxMs: 200 },
  });
  await made.start();
  return made;
}

const until = async (check: () => boolean | Promise<boolean>, what: string, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

describe('McpServers against real servers from npm', () => {
  it('lists the tools namespaced by server with their effect class, and a read call answers', async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'demiurge-mcp-')));
    mkdirSync(join(dir, 'files'));
    writeFileSync(join(dir, 'files', 'hello.txt'), 'hello from the file');
    servers = await open([stdio('fs', [filesystemServer, join(dir, 'files')])]);
    const tools = new Map(servers.tools().map((t) => [t.name, t]));
    expect(tools.get('fs__read_text_file')).toMatchObject({ effect: 'read', idempotent: true });
    expect(tools.get('fs__write_file')).toMatchObject({ effect: 'mcp.write' });
    expect(tools.get('fs__read_text_file')!.parameters).toMatchObject({ type: 'object' });
    const result = await tools
      .get('fs__read_text_file')!
      .run({ path: join(dir, 'files', 'hello.txt') }, { signal: new AbortController().signal } as never);
    expect(result.output).toBe('hello from the file');
    const [status] = await mcpServerStatus(store!);
    expect(status).toMatchObject({ server: 'fs', state: 'running', attempts: 1, crashes: 0, host: 'host-a' });
    expect(status!.tools).toBe(tools.size);
  }, 60_000);

  it('a server killed mid-call: the call is unknown, the crash recorded, the server restarted and usable again', async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'demiurge-mcp-')));
    servers = await open([stdio('every', [everythingServer])]);
    const long = servers.tools().find((t) => t.name === 'every__trigger-long-running-operation')!;
    const call = long.run({ duration: 30, steps: 30 }, { signal: new AbortController().signal } as never);
    const outcome = call.then(
      () => 'finished',
      (e: unknown) => e,
    );
    await new Promise((r) => setTimeout(r, 300));
    process.kill(servers.status()[0]!.pid!, 'SIGKILL');
    const error = await outcome;
    expect(error).toBeInstanceOf(ToolOutcomeUnknownError);
    expect((error as ToolOutcomeUnknownError).reason).toMatch(/the MCP server every went away while the call ran/);
    await until(() => servers!.status()[0]!.state === 'running' && servers!.status()[0]!.attempt === 2, 'a restart');
    const echo = servers.tools().find((t) => t.name === 'every__echo')!;
    expect((await echo.run({ message: 'again' }, { signal: new AbortController().signal } as never)).output).toContain(
      'again',
    );
    const types = (await store!.readAll()).map((e) => e.type);
    expect(types).toEqual(['mcp.server_starting', 'mcp.server_started', 'mcp.server_crashed', 'mcp.server_started']);
    await servers.close();
    const [status] = await mcpServerStatus(store!);
    expect(status).toMatchObject({ state: 'stopped', attempts: 2, crashes: 1, lastReason: 'the host closed' });
    expect((await verifyLog(store!.iterate())).violations).toEqual([]);
  }, 60_000);

  it('a server that cannot start is restarted with backoff, then given up; its servers of a gone host are stopped', async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'demiurge-mcp-')));
    writeFileSync(join(dir, 'broken.mjs'), 'console.error("no config here"); process.exit(3);\n');
    servers = await open([stdio('broken', [join(dir, 'broken.mjs')], 2)], 'host-gone');
    await until(async () => (await mcpServerStatus(store!))[0]?.state === 'failed', 'the server to be given up');
    const [status] = await mcpServerStatus(store!);
    expect(status).toMatchObject({ crashes: 2 });
    expect(status!.lastReason).toMatch(/could not start: .*no config here/);
    const unavailable = servers.tools();
    expect(unavailable).toEqual([]);
    // A host that died with a server running: the next host start records it stopped.
    const events = (await store!.readAll()).map((e) => e.type);
    expect(events.filter((t) => t === 'mcp.server_crashed')).toHaveLength(2);
    servers = undefined;
    const running = await open([stdio('fs', [filesystemServer, dir])], 'host-dead');
    const next = await open([stdio('fs', [filesystemServer, dir])], 'host-b');
    const all = await store!.readAll({ types: ['mcp.server_stopped'] });
    expect(all.map((e) => (e.data as { reason: string }).reason)).toEqual([
      'its host host-dead is gone (found at a host start)',
    ]);
    await running.close();
    servers = next;
  }, 60_000);
});
