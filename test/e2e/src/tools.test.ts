import { writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { type OpenAITestServer, type RecordedRequest, reply, startOpenAITestServer } from '@demiurge/providers/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { demiurge, tempHome } from './cli.js';
import { recordGolden } from './golden-record.js';

let server: OpenAITestServer | undefined;
const cleanups: (() => void)[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const c of cleanups.splice(0)) c();
});

interface WireMessage {
  role: string;
  content: string | null;
  tool_call_id?: string;
}
const messagesOf = (r: RecordedRequest) => (r.body as { messages: WireMessage[] }).messages;

interface LoggedEvent {
  type: string;
  streamId: string;
  data: Record<string, unknown>;
}

async function events(home: string, ...types: string[]): Promise<LoggedEvent[]> {
  const run = await demiurge(['events', '--json', '--home', home, '--type', ...types]);
  expect(run.code).toBe(0);
  return run.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as LoggedEvent);
}

/** The outcome of each tool call of the log, by the call id the model gave (call_*). */
async function outcomes(home: string): Promise<Record<string, LoggedEvent>> {
  const byStream = new Map<string, string>();
  for (const e of await events(home, 'turn.model_responded')) {
    for (const c of e.data.toolCalls as { callId: string; toolCallId: string }[]) byStream.set(c.toolCallId, c.callId);
  }
  const result: Record<string, LoggedEvent> = {};
  for (const e of await events(home, 'tool_call.succeeded', 'tool_call.failed')) {
    result[byStream.get(e.streamId)!] = e;
  }
  return result;
}

describe('tools against a third-party OpenAI-compatible server, through the real CLI', () => {
  it('task_status view=operator, strict delegate_task and core_id, bad tool JSON answered, system content first', async () => {
    server = await startOpenAITestServer();
    const home = tempHome();
    cleanups.push(home.remove);
    writeFileSync(
      join(home.path, 'config.yaml'),
      `provider:\n  name: openai\n  model: local\n  base_url: ${server.baseUrl}\n  max_retries: 0\n`,
    );
    server.enqueue(
      reply.toolCalls([
        { id: 'call_shell', name: 'shell', arguments: { command: 'sleep 5', background: true } },
        { id: 'call_policy', name: 'delegate_task', arguments: { goal: 'look around', tool_policy: 'read-only' } },
        { id: 'call_core', name: 'delegate_task', arguments: { goal: 'look around', core_id: 'researcher' } },
        { id: 'call_json', name: 'write_file', arguments: '{"path": "a.txt", "content": ' },
      ]),
      (request) => {
        const shell = messagesOf(request).find((m) => m.tool_call_id === 'call_shell');
        const { task_id } = JSON.parse(shell?.content ?? '{}') as { task_id: string };
        return reply.toolCalls([{ id: 'call_status', name: 'task_status', arguments: { task_id, view: 'operator' } }]);
      },
      reply.text('All checked.'),
      reply.text('Second answer.'),
    );
    const first = await demiurge(['run', 'check the tools', '--home', home.path, '--json']);
    expect(first.stderr).not.toMatch(/unexpected error/i);
    expect(first.code).toBe(0);
    const answer = JSON.parse(first.stdout.trim().split('\n').at(-1)!) as { text: string; sessionId: string };
    expect(answer.text).toBe('All checked.');

    const calls = await outcomes(home.path);
    const message = (id: string) => (calls[id]!.data.error as { message: string }).message;
    expect(calls.call_policy!.type).toBe('tool_call.failed');
    expect(message('call_policy')).toContain('unknown key "tool_policy"; accepted keys: goal, core_id');
    expect(message('call_core')).toBe(
      'unknown core_id "researcher": this host runs one Agent Core, "default"; omit core_id or pass "default"',
    );
    expect(message('call_json')).toMatch(/^invalid write_file arguments: the arguments are not valid JSON: /);
    expect(calls.call_status!.type).toBe('tool_call.succeeded');
    const status = JSON.parse(calls.call_status!.data.output as string) as Record<string, unknown>;
    for (const key of ['task_id', 'kind', 'title', 'status', 'log_tail']) expect(Object.keys(status)).toContain(key);
    expect(status).toMatchObject({
      kind: 'terminal.exec',
      session_id: answer.sessionId,
      notify_policy: 'return_to_parent',
    });
    // The model saw the parse error in its tool result; the bad arguments went back to the server as {}.
    const second = messagesOf(server.requests[1]!);
    expect(second.find((m) => m.tool_call_id === 'call_json')?.content).toContain('not valid JSON');
    const echoed = (
      server.requests[1]!.body as { messages: { tool_calls?: { id: string; function: { arguments: string } }[] }[] }
    ).messages
      .flatMap((m) => m.tool_calls ?? [])
      .find((c) => c.id === 'call_json');
    expect(echoed?.function.arguments).toBe('{}');

    // `demiurge run` hosting in-process: the person at the CLI started (and owns) the run.
    const started = (await events(home.path, 'run.started'))[0]!;
    expect(started.data.principal).toEqual({ kind: 'user', id: `cli:${userInfo().username}` });

    // A second turn of the same session: the system content comes first, once.
    const again = await demiurge(['run', 'and again', '--session', answer.sessionId, '--home', home.path]);
    expect(again.code).toBe(0);
    const roles = messagesOf(server.requests.at(-1)!).map((m) => m.role);
    expect(roles[0]).toBe('system');
    expect(roles.filter((r) => r === 'system')).toHaveLength(1);
    expect(roles.at(-1)).toBe('user');
    await recordGolden('e2e-delegation', home.path);
  }, 60_000);
});
