import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { cliBin, tempHome } from './cli.js';
import { until } from './mcp-home.js';
import { type FakeStep, type ServeProcess, startServe, writeHostHome } from './serve-process.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A home with the fake provider playing `script`, its host serving; and an MCP client on `demiurge mcp`. */
async function mcpClientOn(
  script: readonly FakeStep[],
): Promise<{ client: Client; home: string; serve: ServeProcess }> {
  const home = tempHome();
  cleanups.push(home.remove);
  const workspace = writeHostHome(home.path, { script });
  const serve = await startServe(home.path, workspace);
  cleanups.push(() => serve.stop('SIGKILL'));
  const client = new Client({ name: 'e2e-mcp-client', version: '1.0.0' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cliBin, 'mcp', '--home', home.path],
    cwd: workspace,
    stderr: 'pipe',
  });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, home: home.path, serve };
}

interface Answer {
  text: string;
  result: Record<string, unknown> & Record<string, never>;
  isError: boolean;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Answer> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  const result = (r.structuredContent as { result?: unknown } | undefined)?.result as Answer['result'];
  return { text, result, isError: r.isError === true };
}

describe('demiurge mcp: the runtime as an MCP server, driven by the SDK client (real CLI and serving host)', () => {
  it('lists its tools; submits a message; lists, shows and cancels tasks; lists and shows runs; reads the status', async () => {
    const { client } = await mcpClientOn([
      { tool_calls: [{ name: 'shell', arguments: { command: 'sleep 60', background: true } }] },
      { content: 'Started a background task.' },
    ]);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'submit_message',
      'status',
      'list_tasks',
      'show_task',
      'list_runs',
      'show_run',
      'cancel',
    ]);
    const readOnly = tools.filter((t) => t.annotations?.readOnlyHint === true).map((t) => t.name);
    expect(readOnly).toEqual(['status', 'list_tasks', 'show_task', 'list_runs', 'show_run']);

    const reply = await call(client, 'submit_message', { text: 'start something in the background' });
    expect(reply.isError, reply.text).toBe(false);
    expect(reply.result).toMatchObject({ status: 'completed', text: 'Started a background task.', via: 'gateway' });
    const { sessionId, runId } = reply.result as unknown as { sessionId: string; runId: string };

    const tasks = await call(client, 'list_tasks', { session_id: sessionId });
    const [task] = (tasks.result as unknown as { tasks: { taskId: string; kind: string; status: string }[] }).tasks;
    expect(task).toMatchObject({ kind: 'terminal.exec' });
    const shown = await call(client, 'show_task', { task_id: task!.taskId });
    expect(shown.result).toMatchObject({ task: { taskId: task!.taskId, sessionId } });
    const cancelled = await call(client, 'cancel', { id: task!.taskId, reason: 'not needed (mcp client)' });
    expect(cancelled.isError, cancelled.text).toBe(false);
    expect(cancelled.result).toMatchObject({ task: { status: 'cancelled' } });

    const runs = await call(client, 'list_runs', { session_id: sessionId });
    expect(JSON.stringify(runs.result)).toContain(runId);
    const run = await call(client, 'show_run', { run_id: runId });
    expect(JSON.stringify(run.result)).toContain('"status":"completed"');
    const status = await call(client, 'status');
    expect(status.result).toMatchObject({ sessions: { active: 1 }, mcpServers: [] });

    // Refusals are tool results that say what was wrong, never protocol errors or "unexpected error".
    const unknownTask = await call(client, 'show_task', { task_id: 'tsk_01JD5Y7Q6N0000000000000000' });
    expect(unknownTask).toMatchObject({
      isError: true,
      text: expect.stringMatching(/task tsk_01JD5Y7Q6N0000000000000000/),
    });
    const badId = await call(client, 'cancel', { id: 'ses_x' });
    expect(badId).toMatchObject({
      isError: true,
      text: expect.stringMatching(/give a run id \(run_\.\.\.\) or a task id/),
    });
    for (const answer of [unknownTask, badId]) expect(answer.text).not.toMatch(/unexpected error/i);
  }, 120_000);

  it('cancel stops a live run: the submit_message in flight answers cancelled', async () => {
    const { client } = await mcpClientOn([
      { tool_calls: [{ name: 'shell', arguments: { command: 'sleep 60' } }] },
      { content: 'never reached' },
    ]);
    const pending = call(client, 'submit_message', { text: 'sleep a while' });
    const runId = await until(async () => {
      const live = await call(client, 'list_runs', { live: true });
      const runs = (live.result as unknown as { runs?: { runId: string; status: string }[] }).runs ?? [];
      return runs.find((r) => r.status === 'running')?.runId;
    }, 'a live run');
    const cancel = await call(client, 'cancel', { id: runId, reason: 'stopped by the MCP client' });
    expect(cancel.isError, cancel.text).toBe(false);
    const reply = await pending;
    expect(reply.result).toMatchObject({ runId, status: 'cancelled' });
  }, 120_000);
});
