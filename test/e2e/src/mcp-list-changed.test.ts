import { afterEach, describe, expect, it } from 'vitest';
import { demiurge, demiurgeJson, tempHome } from './cli.js';
import { eventsOf, until, writeChangingHome } from './mcp-home.js';
import { type ServeProcess, startServe } from './serve-process.js';

let home: ReturnType<typeof tempHome> | undefined;
let serve: ServeProcess | undefined;
afterEach(async () => {
  await serve?.stop('SIGKILL');
  home?.remove();
  home = serve = undefined;
});

const call = (name: string) => ({ name, arguments: {} });

/** `demiurge run ... --json` (through the serving host's gateway): its last line, parsed. */
async function runJson(args: string[]): Promise<{ sessionId: string; text: string }> {
  const run = await demiurge([...args, '--json']);
  expect(run.stderr).not.toMatch(/unexpected error/i);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { sessionId: string; text: string };
}

describe('an MCP server that changes its tools (notifications/tools/list_changed), on a serving host', () => {
  it('the host lists them again (mcp.tools_changed) and offers the new list from the next turn admitted', async () => {
    home = tempHome();
    const workspace = writeChangingHome(home.path, [
      { match: 'swap the tools', tool_calls: [call('dyn__swap')] },
      { match: 'swap the tools', tool_calls: [call('dyn__late')] }, // the same turn: the tools pinned at admission
      { match: 'swap the tools', content: 'swapped' },
      { match: 'use the new tool', tool_calls: [call('dyn__late'), call('dyn__old')] }, // the next turn: the new list
      { match: 'use the new tool', content: 'done' },
    ]);
    serve = await startServe(home.path, workspace);
    const first = await runJson(['run', 'swap the tools', '--home', home.path]);
    expect(first.text).toBe('swapped');

    const [changed] = await until(async () => {
      const found = await eventsOf(home!.path, 'mcp.tools_changed');
      return found.length > 0 ? found : undefined;
    }, 'mcp.tools_changed');
    expect(changed!.data).toMatchObject({
      added: ['dyn__late'],
      removed: ['dyn__old'],
      tools: [
        { name: 'dyn__swap', tool: 'swap', readOnly: true },
        { name: 'dyn__late', tool: 'late', readOnly: true },
      ],
    });

    const second = await runJson(['run', 'use the new tool', '--home', home.path]);
    expect(second.text).toBe('done');

    // Each turn's pin: the first was admitted with old, the second with late.
    const pins = (await eventsOf(home.path, 'turn.started')).map((e) => (e.data.core as { tools: string[] }).tools);
    expect(pins[0]).toEqual(expect.arrayContaining(['dyn__old', 'dyn__swap']));
    expect(pins[0]).not.toContain('dyn__late');
    expect(pins[1]).toEqual(expect.arrayContaining(['dyn__late', 'dyn__swap']));
    expect(pins[1]).not.toContain('dyn__old');

    const outcomes = await eventsOf(home.path, 'tool_call.requested', 'tool_call.succeeded', 'tool_call.failed');
    const byCall = new Map<string, { tool?: string; outcome?: string; text?: string }>();
    for (const e of outcomes) {
      const entry = byCall.get(e.streamId) ?? {};
      if (e.type === 'tool_call.requested') entry.tool = e.data.tool as string;
      else {
        entry.outcome = e.type;
        entry.text =
          e.type === 'tool_call.succeeded' ? (e.data.output as string) : (e.data.error as { message: string }).message;
      }
      byCall.set(e.streamId, entry);
    }
    const seen = [...byCall.values()];
    expect(seen[0]).toMatchObject({ tool: 'dyn__swap', outcome: 'tool_call.succeeded', text: 'swapped' });
    expect(seen[1]).toMatchObject({ tool: 'dyn__late', outcome: 'tool_call.failed' });
    // Offered in that turn: what it pinned at admission, less what the server removed meanwhile.
    expect(seen[1]!.text).toMatch(/^no tool named dyn__late in this turn; tools: .*dyn__swap$/);
    expect(seen[1]!.text).not.toContain('dyn__old');
    expect(seen[2]).toMatchObject({ tool: 'dyn__late', outcome: 'tool_call.succeeded', text: 'late tool answered' });
    expect(seen[3]).toMatchObject({ tool: 'dyn__old', outcome: 'tool_call.failed' });
    expect(seen[3]!.text).toMatch(/^no tool named dyn__old in this turn/);

    // status counts the new listing; verify accepts the new event through the MCP server machine.
    const status = await demiurgeJson<{ mcpServers: { server: string; state: string; tools: number }[] }>([
      'status',
      '--home',
      home.path,
    ]);
    expect(status.json.mcpServers).toEqual([expect.objectContaining({ server: 'dyn', state: 'running', tools: 2 })]);
    await serve.stop('SIGTERM');
    serve = undefined;
    const verify = await demiurge(['verify', '--home', home.path]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  }, 120_000);
});
