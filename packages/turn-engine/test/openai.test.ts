import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createOpenAIProvider } from '@demiurge/providers';
import { type OpenAITestServer, reply, startOpenAITestServer } from '@demiurge/providers/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, openHarness } from './harness.js';

let h: Harness | undefined;
let server: OpenAITestServer | undefined;
afterEach(async () => {
  await h?.close();
  await server?.close();
  h = undefined;
  server = undefined;
});

async function harnessFor(s: OpenAITestServer): Promise<Harness> {
  return openHarness({
    provider: createOpenAIProvider({
      baseUrl: s.baseUrl,
      model: 'local-model',
      apiKey: 'k',
      maxRetries: 1,
      retryBaseMs: 5,
      timeoutMs: 2_000,
    }),
  });
}

describe('TurnEngine with the OpenAI-compatible provider over real HTTP', () => {
  it('runs tool calls streamed in fragments and answers', async () => {
    server = await startOpenAITestServer();
    server.enqueue(
      reply.toolCalls([{ name: 'write_file', arguments: { path: 'x.txt', content: 'from the model' } }]),
      reply.text('Wrote x.txt.'),
    );
    h = await harnessFor(server);
    const { sessionId } = await h.sessions.create({ title: 't', coreId: 'default' });
    const outcome = await h.engine.runTurn({ sessionId, text: 'write x' });
    expect(outcome).toMatchObject({ status: 'completed', text: 'Wrote x.txt.' });
    // The second request carried the assistant tool call and its result back, and the tools as JSON Schema.
    const body = server.requests[1]!.body as { messages: { role: string; tool_call_id?: string }[]; tools: unknown[] };
    expect(body.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(body.messages[2]!.tool_call_id).toBe('call_0');
    expect(JSON.stringify(body.tools)).toContain('"old_text"');
    expect(await h.verify()).toEqual([]);
  });

  it.each([
    ['500s', () => [reply.status(500), reply.status(500)], 'provider_http'],
    ['a malformed chunk', () => [reply.malformed()], 'provider_protocol'],
    ['a disconnect mid-stream', () => [reply.disconnect()], 'provider_disconnected'],
  ] as const)('records %s as a typed failure on the turn', async (_name, replies, code) => {
    server = await startOpenAITestServer();
    server.enqueue(...replies());
    h = await harnessFor(server);
    const { sessionId } = await h.sessions.create({ title: 't', coreId: 'default' });
    const outcome = await h.engine.runTurn({ sessionId, text: 'hi' });
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe(code);
    const failed = (await h.store.readAll()).find((e) => e.type === 'turn.failed');
    expect((failed!.data as { error: { code: string; message: string } }).error).toMatchObject({ code });
    expect((await h.runs.get(outcome.runId)).state).toBe('failed');
    expect(await h.verify()).toEqual([]);
  });
});

describe('TurnEngine against strict third-party OpenAI-compatible servers', () => {
  it('answers a tool call whose arguments are not JSON with a tool error; the model corrects itself', async () => {
    server = await startOpenAITestServer();
    server.enqueue(
      reply.toolCalls([{ id: 'call_bad', name: 'write_file', arguments: '{"path": "x.txt", "content": ' }]),
      reply.toolCalls([{ id: 'call_good', name: 'write_file', arguments: { path: 'x.txt', content: 'fixed' } }]),
      reply.text('Wrote x.txt on the second try.'),
    );
    h = await harnessFor(server);
    const { sessionId } = await h.sessions.create({ title: 't', coreId: 'default' });
    const outcome = await h.engine.runTurn({ sessionId, text: 'write x' });
    expect(outcome).toMatchObject({ status: 'completed', text: 'Wrote x.txt on the second try.' });
    expect(readFileSync(join(h.workspace, 'x.txt'), 'utf8')).toBe('fixed');
    // The bad call is recorded failed with the parse error, never run; the model was told so.
    const failed = (await h.store.readAll({ types: ['tool_call.failed'] }))[0]!;
    expect((failed.data as { error: { message: string } }).error.message).toMatch(
      /^invalid write_file arguments: the arguments are not valid JSON: .+; call write_file again with a JSON object$/,
    );
    const second = server.requests[1]!.body as {
      messages: { role: string; content: string | null; tool_calls?: { function: { arguments: string } }[] }[];
    };
    expect(second.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(second.messages[1]!.tool_calls![0]!.function.arguments).toBe('{}');
    expect(second.messages[2]!.content).toContain('not valid JSON');
    expect(await h.verify()).toEqual([]);
  });

  it('sends all system content first, once, from the second turn on too', async () => {
    server = await startOpenAITestServer();
    h = await openHarness({
      instructions: 'You are terse.',
      hooks: {
        input: async (turn) => [
          { role: 'system', text: `context for ${turn.text}`, writeHistory: false },
          { role: 'user', text: `note for ${turn.text}`, writeHistory: false },
        ],
      },
      provider: createOpenAIProvider({ baseUrl: server.baseUrl, model: 'm', apiKey: 'k', maxRetries: 0 }),
    });
    const { sessionId } = await h.sessions.create({ title: 't', coreId: 'default' });
    await h.sessions.recordMessage({ sessionId, role: 'system', text: 'forked parent context' });
    expect((await h.engine.runTurn({ sessionId, text: 'one' })).status).toBe('completed');
    expect((await h.engine.runTurn({ sessionId, text: 'two' })).status).toBe('completed');
    const body = server.requests[1]!.body as { messages: { role: string; content: string }[] };
    expect(body.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'user']);
    expect(body.messages[0]!.content).toBe('You are terse.\n\nforked parent context\n\ncontext for two');
    expect(body.messages.slice(1).map((m) => m.content)).toEqual(['one', '[server] one', 'note for two', 'two']);
    expect(await h.verify()).toEqual([]);
  });
});
