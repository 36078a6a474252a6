import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { demiurge, demiurgeJson, tempHome } from './cli.js';
import { eventsOf, until, writeMcpHome } from './mcp-home.js';
import { killWatched, type ServeProcess, startServe, watchCli } from './serve-process.js';

let home: ReturnType<typeof tempHome>;
let serve: ServeProcess | undefined;
beforeEach(() => {
  home = tempHome();
});
afterEach(async () => {
  killWatched();
  await serve?.stop('SIGKILL');
  serve = undefined;
  home.remove();
});

const LONG = { name: 'every__trigger-long-running-operation', arguments: { duration: 60, steps: 60 } };

/** The long call's id once it is recorded started (the server is working on it). */
const longCallStarted = () =>
  until(async () => {
    const events = await eventsOf(home.path, 'tool_call.requested', 'tool_call.started');
    const requested = events.find((e) => e.type === 'tool_call.requested' && e.data.tool === LONG.name);
    return requested && events.some((e) => e.type === 'tool_call.started' && e.streamId === requested.streamId)
      ? requested.streamId
      : undefined;
  }, 'the long MCP call to start');

describe('MCP calls cut short (real processes, SIGKILL)', () => {
  it('a server killed mid-call leaves the call unknown, never re-run; the server is restarted and status reports the crash', async () => {
    const { workspace } = writeMcpHome(home.path, {
      script: [
        { tool_calls: [LONG] },
        { tool_calls: [{ name: 'every__echo', arguments: { message: 'still here' } }] },
        { content: 'The long operation may or may not have finished.' },
      ],
    });
    const run = watchCli(['run', 'start the long operation', '--home', home.path, '--json'], { cwd: workspace });
    const callId = await longCallStarted();
    const [started] = await eventsOf(home.path, 'mcp.server_started').then((all) =>
      all.filter((e) => (e.data.tools as { tool: string }[]).some((t) => t.tool === 'echo')),
    );
    process.kill(started!.data.pid as number, 'SIGKILL');
    const done = await run.exited;
    expect(done.stderr).not.toMatch(/unexpected error/i);
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout.trim().split('\n').at(-1)!)).toMatchObject({
      text: 'The long operation may or may not have finished.',
    });

    const calls = await eventsOf(home.path, 'tool_call.started', 'tool_call.unknown', 'tool_call.succeeded');
    const ofLong = calls.filter((e) => e.streamId === callId).map((e) => e.type);
    expect(ofLong).toEqual(['tool_call.started', 'tool_call.unknown']);
    const unknown = calls.find((e) => e.type === 'tool_call.unknown')!;
    expect(unknown.data.reason).toMatch(/^the MCP server every went away while the call ran/);
    // The echo after it ran on the restarted server.
    expect(calls.filter((e) => e.type === 'tool_call.succeeded')).toHaveLength(1);
    const server = await eventsOf(home.path, 'mcp.server_crashed', 'mcp.server_started');
    const every = server.filter((e) => e.streamId === started!.streamId).map((e) => e.type);
    expect(every).toEqual(['mcp.server_started', 'mcp.server_crashed', 'mcp.server_started']);

    const status = await demiurgeJson<{ mcpServers: { server: string; crashes: number; attempts: number }[] }>([
      'status',
      '--home',
      home.path,
    ]);
    expect(status.json.mcpServers.find((s) => s.server === 'every')).toMatchObject({ crashes: 1, attempts: 2 });
  }, 120_000);

  it('a host killed mid-call: the next host start records the call unknown (never re-run) and the dead host’s servers stopped', async () => {
    const { workspace } = writeMcpHome(home.path, {
      script: [{ tool_calls: [LONG] }, { content: 'Recovered without running it again.' }],
    });
    serve = await startServe(home.path, workspace);
    const run = watchCli(['run', 'start the long operation', '--home', home.path], { cwd: workspace });
    const callId = await longCallStarted();
    await serve.stop('SIGKILL');
    await run.exited;
    serve = await startServe(home.path, workspace);
    const completed = await until(async () => {
      const ends = await eventsOf(home.path, 'turn.completed');
      return ends.length > 0 ? ends : undefined;
    }, 'the resumed turn to complete');
    expect(completed).toHaveLength(1);

    const calls = await eventsOf(home.path, 'tool_call.started', 'tool_call.unknown', 'tool_call.succeeded');
    expect(calls.filter((e) => e.streamId === callId).map((e) => e.type)).toEqual([
      'tool_call.started',
      'tool_call.unknown',
    ]);
    expect(calls.filter((e) => e.type === 'tool_call.started')).toHaveLength(1);
    const stopped = await eventsOf(home.path, 'mcp.server_stopped');
    expect(stopped.map((e) => e.data.reason)).toEqual([
      expect.stringMatching(/^its host host:.* is gone/),
      expect.stringMatching(/^its host host:.* is gone/),
    ]);
    await serve.stop('SIGTERM');
    serve = undefined;
    const verify = await demiurge(['verify', '--home', home.path]);
    expect(verify.code, verify.stdout).toBe(0);
    expect(verify.stdout).toMatch(/^verify: ok/m);
  }, 150_000);
});
