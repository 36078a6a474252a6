import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collectCompletion } from './collect.js';
import { ProviderError } from './errors.js';
import { createOpenAIProvider, type OpenAIProviderOptions } from './openai.js';
import type { ChatMessage, CompletionChunk, ModelProvider, ToolSpec } from './provider.js';
import { type OpenAITestServer, openAIChunk, reply, startOpenAITestServer } from './testing/index.js';

let server: OpenAITestServer;
beforeEach(async () => {
  server = await startOpenAITestServer();
});
afterEach(() => server.close());

const hello: ChatMessage[] = [{ role: 'user', content: 'Say hello' }];

function provider(options: Partial<OpenAIProviderOptions> = {}): ModelProvider {
  return createOpenAIProvider({ baseUrl: server.baseUrl, model: 'test-model', retryBaseMs: 1, env: {}, ...options });
}

async function chunksOf(stream: AsyncIterable<CompletionChunk>): Promise<CompletionChunk[]> {
  const chunks: CompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

describe('createOpenAIProvider: streaming', () => {
  it('streams text chunks as they arrive, then done with the usage and finish reason', async () => {
    server.enqueue(reply.text(['Hel', 'lo', ' there'], { usage: { inputTokens: 7, outputTokens: 3 } }));
    const chunks = await chunksOf(provider().complete({ messages: hello, tools: [] }));
    expect(chunks).toEqual([
      { type: 'text', text: 'Hel' },
      { type: 'text', text: 'lo' },
      { type: 'text', text: ' there' },
      { type: 'done', usage: { inputTokens: 7, outputTokens: 3 }, finishReason: 'stop' },
    ]);
  });

  it('assembles tool calls from fragments split across deltas, in index order', async () => {
    server.enqueue(
      reply.toolCalls(
        [
          { id: 'call_a', name: 'read_file', arguments: { path: 'src/index.ts', lines: [1, 20] } },
          { id: 'call_b', name: 'list_dir', arguments: {} },
        ],
        { text: 'Let me look.', fragmentSize: 3 },
      ),
    );
    const completion = await collectCompletion(provider().complete({ messages: hello, tools: [] }));
    expect(completion).toEqual({
      content: 'Let me look.',
      toolCalls: [
        { id: 'call_a', name: 'read_file', arguments: { path: 'src/index.ts', lines: [1, 20] } },
        { id: 'call_b', name: 'list_dir', arguments: {} },
      ],
      usage: { inputTokens: 10, outputTokens: 5 },
      finishReason: 'tool_calls',
    });
  });

  it('translates the request: messages incl. tool calls and results, tools, stream flags, auth header', async () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is in src?' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'list_dir', arguments: { path: 'src' } }] },
      { role: 'tool', toolCallId: 'call_1', name: 'list_dir', content: 'index.ts' },
      { role: 'assistant', content: 'One file.' },
      { role: 'user', content: 'Thanks' },
    ];
    const tools: ToolSpec[] = [
      { name: 'list_dir', description: 'List a directory', parameters: { type: 'object', properties: {} } },
    ];
    await collectCompletion(provider({ apiKey: 'sk-test' }).complete({ messages, tools }));
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/v1/chat/completions' });
    expect(request?.headers.authorization).toBe('Bearer sk-test');
    expect(request?.body).toEqual({
      model: 'test-model',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'What is in src?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'list_dir', arguments: '{"path":"src"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'index.ts' },
        { role: 'assistant', content: 'One file.' },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'list_dir',
            description: 'List a directory',
            parameters: { type: 'object', properties: {} },
          },
        },
      ],
    });
  });

  it('omits tools when there are none, and the auth header without a key; OPENAI_API_KEY fills in', async () => {
    await collectCompletion(provider().complete({ messages: hello, tools: [] }));
    await collectCompletion(provider({ env: { OPENAI_API_KEY: 'sk-env' } }).complete({ messages: hello, tools: [] }));
    expect(server.requests[0]?.body).not.toHaveProperty('tools');
    expect(server.requests[0]?.headers).not.toHaveProperty('authorization');
    expect(server.requests[1]?.headers.authorization).toBe('Bearer sk-env');
  });
});

describe('createOpenAIProvider: retries', () => {
  it('retries a 500 twice, then streams the third answer', async () => {
    server.enqueue(reply.status(500), reply.status(503), reply.text('Recovered'));
    const retries: unknown[] = [];
    const onRetry = (retry: unknown) => retries.push(retry);
    const completion = await collectCompletion(provider().complete({ messages: hello, tools: [], onRetry }));
    expect(completion.content).toBe('Recovered');
    expect(server.requests).toHaveLength(3);
    // The caller is told of each retry (the host counts them on its model request span).
    expect(retries).toEqual([
      { attempt: 1, reason: 'HTTP 500' },
      { attempt: 2, reason: 'HTTP 503' },
    ]);
  });

  it('gives up after maxRetries + 1 requests with provider_http, the status and the body', async () => {
    server.setFallback(reply.status(500, '{"error":{"message":"upstream exploded"}}'));
    const error = await failure(
      collectCompletion(provider({ maxRetries: 2 }).complete({ messages: hello, tools: [] })),
    );
    expect(server.requests).toHaveLength(3);
    expect(error).toMatchObject({ code: 'provider_http', status: 500, attempts: 3, retryable: true });
    expect(error.message).toBe(
      `openai provider: HTTP 500 from ${server.baseUrl}/chat/completions after 3 attempts: {"error":{"message":"upstream exploded"}}`,
    );
  });

  it('does not retry a 400', async () => {
    server.enqueue(reply.status(400, 'bad model'));
    const error = await failure(collectCompletion(provider().complete({ messages: hello, tools: [] })));
    expect(error).toMatchObject({ code: 'provider_http', status: 400, attempts: 1, retryable: false });
    expect(error.message).toMatch(/HTTP 400 from http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions: bad model$/);
    expect(server.requests).toHaveLength(1);
  });

  it('waits as long as Retry-After says after a 429', async () => {
    server.enqueue(reply.rateLimited(1), reply.text('ok'));
    const started = performance.now();
    const completion = await collectCompletion(provider().complete({ messages: hello, tools: [] }));
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(completion.content).toBe('ok');
    expect(server.requests).toHaveLength(2);
  });

  it('caps a long Retry-After at maxRetryDelayMs', async () => {
    server.enqueue(reply.rateLimited(3600), reply.text('ok'));
    const started = performance.now();
    await collectCompletion(provider({ maxRetryDelayMs: 20 }).complete({ messages: hello, tools: [] }));
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('retries connection failures, then reports provider_disconnected naming the URL', async () => {
    const closed = await startOpenAITestServer();
    await closed.close();
    const error = await failure(
      collectCompletion(provider({ baseUrl: closed.baseUrl, maxRetries: 2 }).complete({ messages: hello, tools: [] })),
    );
    expect(error).toMatchObject({ code: 'provider_disconnected', attempts: 3, retryable: true });
    expect(error.message).toContain(
      `could not reach ${closed.baseUrl}/chat/completions after 3 attempts: fetch failed`,
    );
  });
});

describe('createOpenAIProvider: broken streams', () => {
  it('a malformed chunk is provider_protocol, quoting the chunk', async () => {
    server.enqueue(reply.malformed('{bad'));
    const error = await failure(collectCompletion(provider().complete({ messages: hello, tools: [] })));
    expect(error).toMatchObject({ code: 'provider_protocol', retryable: false });
    expect(error.message).toMatch(/^openai provider: malformed stream chunk: .+ in "data: \{bad"$/);
    expect(server.requests).toHaveLength(1);
  });

  it('a chunk of the wrong shape is provider_protocol naming the field', async () => {
    server.enqueue(reply.events([JSON.stringify({ choices: [{ index: 0, delta: { content: 42 } }] })]));
    const error = await failure(collectCompletion(provider().complete({ messages: hello, tools: [] })));
    expect(error.message).toContain('malformed stream chunk: choices[0].delta.content:');
  });

  it('tool arguments that are not JSON come back as a call with the parse error, not a failed stream', async () => {
    server.enqueue(
      reply.toolCalls([
        { id: 'call_x', name: 'write_file', arguments: '{"path": "a.txt", ' },
        { id: 'call_y', name: 'read_file', arguments: { path: 'b.txt' } },
      ]),
    );
    const completion = await collectCompletion(provider().complete({ messages: hello, tools: [] }));
    expect(completion.toolCalls).toHaveLength(2);
    expect(completion.toolCalls[0]).toMatchObject({
      id: 'call_x',
      name: 'write_file',
      arguments: '{"path": "a.txt", ',
    });
    expect(completion.toolCalls[0]!.argumentsError).toMatch(
      /^the arguments are not valid JSON: .+ in "\{"path": "a.txt","$/,
    );
    expect(completion.toolCalls[1]).toEqual({ id: 'call_y', name: 'read_file', arguments: { path: 'b.txt' } });
  });

  it('sends a call whose arguments were bad JSON back with arguments "{}" (servers parse them)', async () => {
    server.enqueue(reply.text('ok'));
    await collectCompletion(
      provider().complete({
        messages: [
          ...hello,
          {
            role: 'assistant',
            content: '',
            toolCalls: [{ id: 'call_x', name: 'write_file', arguments: '{"path', argumentsError: 'bad' }],
          },
          { role: 'tool', toolCallId: 'call_x', name: 'write_file', content: 'error: bad JSON' },
        ],
        tools: [],
      }),
    );
    const body = server.requests[0]!.body as { messages: { tool_calls?: { function: { arguments: string } }[] }[] };
    expect(body.messages[1]!.tool_calls![0]!.function.arguments).toBe('{}');
  });

  it('a disconnect mid-stream is provider_disconnected after the text, and is not retried', async () => {
    server.enqueue(reply.disconnect('Partial answer'));
    const seen: CompletionChunk[] = [];
    const error = await failure(
      (async () => {
        for await (const chunk of provider().complete({ messages: hello, tools: [] })) seen.push(chunk);
      })(),
    );
    expect(seen).toEqual([{ type: 'text', text: 'Partial answer' }]);
    expect(error).toMatchObject({ code: 'provider_disconnected', retryable: true });
    expect(error.message).toContain(`${server.baseUrl}/chat/completions`);
    expect(server.requests).toHaveLength(1);
  });

  it('a stream that ends cleanly without [DONE] or finish_reason is provider_disconnected', async () => {
    server.enqueue(reply.events([openAIChunk.text('Half')], 'close'));
    const error = await failure(collectCompletion(provider().complete({ messages: hello, tools: [] })));
    expect(error.code).toBe('provider_disconnected');
    expect(error.message).toContain('ended before [DONE] or a finish_reason');
  });

  it('no response within timeoutMs is provider_timeout, not retried', async () => {
    server.enqueue(reply.hang());
    const error = await failure(
      collectCompletion(provider({ timeoutMs: 150 }).complete({ messages: hello, tools: [] })),
    );
    expect(error).toMatchObject({ code: 'provider_timeout', retryable: true });
    expect(error.message).toMatch(/no response from http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions within 150 ms/);
    expect(server.requests).toHaveLength(1);
  });

  it('a stream that stalls for timeoutMs is provider_timeout', async () => {
    server.enqueue(reply.hang('Thinking'));
    const error = await failure(
      collectCompletion(provider({ timeoutMs: 150 }).complete({ messages: hello, tools: [] })),
    );
    expect(error.code).toBe('provider_timeout');
    expect(error.message).toContain('stalled: no data for 150 ms');
  });

  it('a slow stream that keeps sending is not timed out', async () => {
    server.enqueue(reply.text('one two three four', { delayMs: 60 }));
    const completion = await collectCompletion(provider({ timeoutMs: 150 }).complete({ messages: hello, tools: [] }));
    expect(completion.content).toBe('one two three four');
  });

  it('aborting the signal mid-stream is provider_cancelled', async () => {
    server.enqueue(reply.hang('Working on it'));
    const controller = new AbortController();
    const seen: CompletionChunk[] = [];
    const error = await failure(
      (async () => {
        for await (const chunk of provider().complete({ messages: hello, tools: [], signal: controller.signal })) {
          seen.push(chunk);
          controller.abort();
        }
      })(),
    );
    expect(seen).toEqual([{ type: 'text', text: 'Working on it' }]);
    expect(error).toMatchObject({ code: 'provider_cancelled', retryable: false });
  });

  it('aborting while waiting for the response or during a backoff is provider_cancelled', async () => {
    server.enqueue(reply.hang());
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const waiting = await failure(
      collectCompletion(provider().complete({ messages: hello, tools: [], signal: controller.signal })),
    );
    expect(waiting.code).toBe('provider_cancelled');

    server.setFallback(reply.status(500));
    const backoff = new AbortController();
    setTimeout(() => backoff.abort(), 50);
    const started = performance.now();
    const retrying = await failure(
      collectCompletion(
        provider({ retryBaseMs: 10_000 }).complete({ messages: hello, tools: [], signal: backoff.signal }),
      ),
    );
    expect(retrying.code).toBe('provider_cancelled');
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('an already aborted signal sends nothing', async () => {
    const error = await failure(
      collectCompletion(provider().complete({ messages: hello, tools: [], signal: AbortSignal.abort() })),
    );
    expect(error.code).toBe('provider_cancelled');
    expect(server.requests).toHaveLength(0);
  });
});
