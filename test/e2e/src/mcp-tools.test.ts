import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { demiurge, demiurgeJson, tempHome } from './cli.js';
import { eventsOf, writeMcpHome } from './mcp-home.js';
import { killWatched, watchCli } from './serve-process.js';

let home: ReturnType<typeof tempHome>;
const cleanups: (() => void)[] = [];
beforeEach(() => {
  home = tempHome();
});
afterEach(() => {
  killWatched();
  home.remove();
  for (const cleanup of cleanups.splice(0)) cleanup();
});

interface Listed {
  name: string;
  tool: string;
  readOnly: boolean;
}

describe('an Agent Core with MCP servers (server-filesystem, server-everything from npm), through the real CLI', () => {
  it('the host starts them and offers their tools namespaced by server; a read-only call runs in plan mode', async () => {
    const { workspace, files } = writeMcpHome(home.path, { script: [] });
    writeFileSync(join(files, 'notes.txt'), 'notes from the MCP side');
    writeMcpHome(home.path, {
      script: [
        { tool_calls: [{ name: 'fs__read_text_file', arguments: { path: join(files, 'notes.txt') } }] },
        { content: 'The notes say hello.' },
      ],
    });
    const run = await demiurge(['run', 'read my notes', '--plan', '--home', home.path, '--json']);
    expect(run.stderr).not.toMatch(/unexpected error/i);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout.trim().split('\n').at(-1)!)).toMatchObject({ text: 'The notes say hello.' });

    const started = await eventsOf(home.path, 'mcp.server_starting', 'mcp.server_started');
    expect(started.filter((e) => e.type === 'mcp.server_starting').map((e) => e.data.server)).toEqual(
      expect.arrayContaining(['fs', 'every']),
    );
    const listed = started.flatMap((e) => (e.data.tools as Listed[] | undefined) ?? []);
    expect(listed).toEqual(
      expect.arrayContaining([
        { name: 'fs__read_text_file', tool: 'read_text_file', readOnly: true },
        { name: 'fs__write_file', tool: 'write_file', readOnly: false },
        { name: 'every__echo', tool: 'echo', readOnly: true },
        { name: 'every__trigger-long-running-operation', tool: 'trigger-long-running-operation', readOnly: true },
      ]),
    );
    const calls = await eventsOf(home.path, 'tool_call.requested', 'tool_call.succeeded');
    expect(calls.map((e) => e.type)).toEqual(['tool_call.requested', 'tool_call.succeeded']);
    expect(calls[0]!.data).toMatchObject({ tool: 'fs__read_text_file', effect: 'read' });
    expect(calls[1]!.data.output).toBe('notes from the MCP side');

    // The servers were stopped with the host; status says so (and what they offered).
    const status = await demiurgeJson<{ mcpServers: { server: string; state: string; tools: number }[] }>([
      'status',
      '--home',
      home.path,
    ]);
    expect(status.json.mcpServers.map((s) => [s.server, s.state])).toEqual([
      ['every', 'stopped'],
      ['fs', 'stopped'],
    ]);
    expect(status.json.mcpServers.find((s) => s.server === 'fs')!.tools).toBeGreaterThan(5);
    const text = await demiurge(['status', '--home', home.path]);
    expect(text.stdout).toMatch(/mcp {7}2 servers\n {2}every {2}\[stopped\] {2}stdio /);
    expect(existsSync(join(workspace, 'notes.txt'))).toBe(false);
  }, 90_000);

  it('plan mode denies a write-shaped MCP call with the usual explanation; once approved, it runs once', async () => {
    const write = (path: string) => ({ name: 'fs__write_file', arguments: { path, content: 'written through MCP' } });
    const { files } = writeMcpHome(home.path, { script: [] });
    const target = join(files, 'out.txt');
    writeMcpHome(home.path, { script: [{ tool_calls: [write(target)] }, { content: 'ok' }] });
    const denied = await demiurge(['run', 'write it', '--plan', '--home', home.path]);
    expect(denied.code, denied.stderr).toBe(0);
    const [denial] = await eventsOf(home.path, 'tool_call.denied');
    expect(denial!.data.policy).toBe('plan_mode');
    expect(denial!.data.reason).toMatch(
      /^plan mode denies mcp\.write effects: fs__write_file was not run\. To continue/,
    );
    expect(existsSync(target)).toBe(false);

    // Plan mode that asks (another home): the exact call waits for an approval; granted from another process,
    // it runs once.
    const asking = tempHome();
    cleanups.push(asking.remove);
    const second = writeMcpHome(asking.path, { script: [] });
    const target2 = join(second.files, 'out.txt');
    writeMcpHome(asking.path, {
      script: [{ tool_calls: [write(target2)] }, { content: 'ok' }],
      extra: ['plan_mode:', '  on_write: ask'],
    });
    const run = watchCli(['run', 'write it now', '--plan', '--home', asking.path]);
    const [, approvalId] = await run.stderrMatch(/waits for approval (apr_\w+): fs__write_file/, 60_000);
    const grant = await demiurge(['approvals', 'grant', approvalId!, '--home', asking.path]);
    expect(grant.code, grant.stderr).toBe(0);
    const done = await run.exited;
    expect(done.code, done.stderr).toBe(0);
    expect(readFileSync(target2, 'utf8')).toBe('written through MCP');
    const writes = await eventsOf(asking.path, 'tool_call.requested', 'tool_call.started', 'approval.consumed');
    const ids = writes.filter((e) => e.type === 'tool_call.requested' && e.data.tool === 'fs__write_file');
    expect(ids.map((e) => e.data.effect)).toEqual(['mcp.write']);
    const startedOnce = writes.filter((e) => e.type === 'tool_call.started');
    expect(startedOnce.map((e) => e.streamId)).toEqual([ids[0]!.streamId]);
    expect(writes.filter((e) => e.type === 'approval.consumed').map((e) => e.data.toolCallId)).toEqual([
      ids[0]!.streamId,
    ]);
  }, 120_000);

  it('a bad mcp.yaml stops the host with one line naming the file, the line and the problem; doctor says the same', async () => {
    writeMcpHome(home.path, { script: [] });
    writeFileSync(
      join(home.path, 'core', 'mcp.yaml'),
      'schema_version: 1\nservers:\n  fs:\n    command: node\n    argv: [x]\n',
    );
    const run = await demiurge(['run', 'hello', '--home', home.path]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toMatch(
      /^demiurge: .*core\/mcp\.yaml:5: unknown key "argv" in servers\.fs; allowed: command, args, env, cwd, url, headers/,
    );
    expect(run.stderr).not.toMatch(/unexpected error|\n\s+at /);
    const doctor = await demiurge(['doctor', '--home', home.path]);
    expect(doctor.stdout).toMatch(/core.*does not load: .*mcp\.yaml:5: unknown key "argv"/);
  }, 60_000);
});
