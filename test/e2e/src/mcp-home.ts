import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { demiurge } from './cli.js';
import { type FakeStep, writeHostHome } from './serve-process.js';

const require = createRequire(import.meta.url);
/** Real MCP servers from npm, nobody here wrote them: started by the host as `node <their entry>`. */
export const filesystemServer = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
export const everythingServer = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

/**
 * A home whose Agent Core (`<home>/core`: agent.yaml, an empty pipelines.yaml and `mcp.yaml`) lists the
 * filesystem server on `<home>/ws/files` as `fs` and the everything server as `every`, with the fake provider
 * playing `script`. Returns the workspace and the folder the filesystem server may touch.
 */
export function writeMcpHome(home: string, options: { script: readonly FakeStep[]; extra?: string[] }) {
  const core = join(home, 'core');
  mkdirSync(core, { recursive: true });
  writeFileSync(join(core, 'agent.yaml'), 'id: default\nname: MCP test core\ninstructions: Use the MCP tools.\n');
  writeFileSync(join(core, 'pipelines.yaml'), 'schema_version: 1\n');
  const workspace = writeHostHome(home, { script: options.script, extra: [`core: ${core}`, ...(options.extra ?? [])] });
  const files = join(workspace, 'files');
  mkdirSync(files, { recursive: true });
  writeFileSync(
    join(core, 'mcp.yaml'),
    [
      'schema_version: 1',
      'servers:',
      '  fs:',
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(filesystemServer)}, ${JSON.stringify(files)}]`,
      '  every:',
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(everythingServer)}]`,
      '',
    ].join('\n'),
  );
  return { workspace, files };
}

/** A small MCP server of these tests (the SDK's McpServer): its tool `swap` removes `old` and adds `late`. */
const changingServer = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'changing-tools-server.mjs');

/** A fake step of one conversation (its first user message contains `match`). */
export type MatchedStep = FakeStep & { match: string };

/** A home whose core lists the changing server as `dyn`, the fake provider playing `script`; returns the workspace. */
export function writeChangingHome(path: string, script: readonly MatchedStep[]): string {
  const core = join(path, 'core');
  mkdirSync(core, { recursive: true });
  writeFileSync(join(core, 'agent.yaml'), 'id: default\nname: changing tools\ninstructions: Use the tools.\n');
  writeFileSync(join(core, 'pipelines.yaml'), 'schema_version: 1\n');
  writeFileSync(
    join(core, 'mcp.yaml'),
    `schema_version: 1\nservers:\n  dyn:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(changingServer)}]\n`,
  );
  return writeHostHome(path, { script, extra: [`core: ${core}`] });
}

export interface LoggedEvent {
  readonly type: string;
  readonly streamId: string;
  readonly position: number;
  readonly data: Record<string, unknown>;
}

/** The events of the home's log of these types (`demiurge events --json --type ...`, a child process). */
export async function eventsOf(home: string, ...types: string[]): Promise<LoggedEvent[]> {
  const run = await demiurge(['events', '--json', '--home', home, '--type', ...types]);
  if (run.code !== 0) throw new Error(`events exited ${run.code}: ${run.stderr}`);
  return run.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as LoggedEvent);
}

/**
 * Polls `check` every 200 ms until it returns a value (not undefined), for at most `ms`; a check that throws
 * (the store is not created yet) counts as not yet.
 */
export async function until<T>(check: () => Promise<T | undefined>, what: string, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
