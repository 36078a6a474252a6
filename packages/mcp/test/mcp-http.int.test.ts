import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createIdGenerator, systemClock } from '@demiurge/contracts';
import type { EventStore } from '@demiurge/event-store';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { mcpServersProjector } from '@demiurge/projector-mcp-servers';
import { ToolOutcomeUnknownError } from '@demiurge/turn-engine';
import { afterEach, describe, expect, it } from 'vitest';
import { McpServers, mcpServerStatus } from '../src/index.js';

const require = createRequire(import.meta.url);
const everythingServer = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

let dir: string;
let store: EventStore | undefined;
let servers: McpServers | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  child?.kill('SIGKILL');
  await servers?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

/** server-everything in its streamable HTTP mode on a free port, once it listens. */
async function httpServer(): Promise<string> {
  const port = await freePort();
  child = spawn(process.execPath, [everythingServer, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let err = '';
    child!.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('listening on port')) resolve();
    });
    child!.once('exit', () => reject(new Error(`the server exited: ${err}`)));
  });
  return `http://127.0.0.1:${port}/mcp`;
}

describe('a streamable HTTP MCP server (server-everything from npm)', () => {
  it('lists its tools and answers calls; a server gone mid-call leaves the call unknown and is recorded crashed', async () => {
    dir = mkdtempSync(join(tmpdir(), 'demiurge-mcp-http-'));
    const url = await httpServer();
    store = await openSqliteEventStore({
      path: join(dir, 'store.sqlite3'),
      projectors: [mcpServersProjector],
      clock: systemClock,
      ids: createIdGenerator(systemClock),
    });
    servers = new McpServers({
      store,
      clock: systemClock,
      ids: createIdGenerator(systemClock),
      host: 'host-a',
      coreId: 'default',
      servers: [{ name: 'web', transport: 'http', url, headers: {}, startupTimeoutMs: 10_000, maxRestarts: 1 }],
      logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
      isHostAlive: () => true,
      backoff: { baseMs: 50, maxMs: 100 },
    });
    await servers.start();
    const tools = new Map(servers.tools().map((t) => [t.name, t]));
    const signal = new AbortController().signal;
    expect((await tools.get('web__echo')!.run({ message: 'over http' }, { signal } as never)).output).toContain(
      'over http',
    );
    const long = tools
      .get('web__trigger-long-running-operation')!
      .run({ duration: 30, steps: 30 }, { signal } as never)
      .then(
        () => 'finished',
        (e: unknown) => e,
      );
    await new Promise((r) => setTimeout(r, 300));
    child!.kill('SIGKILL');
    expect(await long).toBeInstanceOf(ToolOutcomeUnknownError);
    const deadline = Date.now() + 20_000;
    while ((await mcpServerStatus(store))[0]?.state !== 'failed' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const [status] = await mcpServerStatus(store);
    expect(status).toMatchObject({ server: 'web', transport: 'http', target: url, state: 'failed' });
    expect(status!.crashes).toBeGreaterThanOrEqual(1);
  }, 60_000);
});
