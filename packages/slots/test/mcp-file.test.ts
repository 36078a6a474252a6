import { afterEach, describe, expect, it } from 'vitest';
import { CoreLoadError, loadCore } from '../src/index.js';
import { coreFiles, removeTempDirs, tempDir, writeFiles } from './harness.js';

afterEach(removeTempDirs);

/** A temp core with the base slots and this `mcp.yaml` (none when null). */
function core(mcp: string | null): string {
  const files: Record<string, string> = coreFiles(
    { input: ['base_input'], output: ['base_output'] },
    { base_input: { phase: 'input' }, base_output: { phase: 'output' } },
  );
  if (mcp !== null) files['mcp.yaml'] = mcp;
  return writeFiles(tempDir('demiurge-core-'), files);
}

async function loadError(dir: string): Promise<string> {
  const error = await loadCore(dir).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CoreLoadError);
  return (error as CoreLoadError).message;
}

describe('mcp.yaml', () => {
  it('a core without one has no MCP servers', async () => {
    expect((await loadCore(core(null))).mcpServers).toEqual([]);
  });

  it('lists stdio and http servers with their defaults; cwd is relative to the core; the file is in the revision', async () => {
    const dir = core(
      [
        'schema_version: 1',
        'servers:',
        '  fs:',
        '    command: node',
        '    args: [server.js, /tmp]',
        '    env: { TOKEN: abc }',
        '  remote:',
        '    url: http://127.0.0.1:9/mcp',
        '    headers: { authorization: Bearer x }',
        '    max_restarts: 0',
      ].join('\n'),
    );
    const loaded = await loadCore(dir);
    expect(loaded.mcpServers).toEqual([
      {
        name: 'fs',
        transport: 'stdio',
        command: 'node',
        args: ['server.js', '/tmp'],
        env: { TOKEN: 'abc' },
        cwd: loaded.dir,
        startupTimeoutMs: 30_000,
        maxRestarts: 5,
      },
      {
        name: 'remote',
        transport: 'http',
        url: 'http://127.0.0.1:9/mcp',
        headers: { authorization: 'Bearer x' },
        startupTimeoutMs: 30_000,
        maxRestarts: 0,
      },
    ]);
    expect(loaded.revision).not.toBe((await loadCore(core(null))).revision);
  });

  it('refuses a bad file naming the file, the line and what is wrong', async () => {
    const both = await loadError(core('schema_version: 1\nservers:\n  fs:\n    command: node\n    url: http://x/\n'));
    expect(both).toMatch(/mcp\.yaml:4: servers\.fs: a server has either a command .* or a url/);
    const key = await loadError(core('schema_version: 1\nservers:\n  fs:\n    command: node\n    argv: [x]\n'));
    expect(key).toMatch(/mcp\.yaml:5: unknown key "argv" in servers\.fs; allowed: command, args, env, cwd, url/);
    const name = await loadError(core('schema_version: 1\nservers:\n  my__fs:\n    command: node\n'));
    expect(name).toMatch(/mcp\.yaml:4: servers\.my__fs: server name "my__fs": a server name is at most 24/);
    const url = await loadError(core('schema_version: 1\nservers:\n  web:\n    url: ftp://x/\n'));
    expect(url).toMatch(/mcp\.yaml:4: servers\.web\.url: url must be an http/);
  });
});
