import { describe, expect, it } from 'vitest';
import { collectCompletion } from './collect.js';
import { readCompletionStream, sseData } from './openai-stream.js';
import { openAIChunk } from './testing/index.js';

async function* bytes(...pieces: string[]): AsyncGenerator<Uint8Array> {
  for (const piece of pieces) yield new TextEncoder().encode(piece);
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

async function* events(...data: string[]): AsyncGenerator<string> {
  yield* data;
}

const context = { provider: 'openai', url: 'http://model/v1/chat/completions' };

describe('sseData', () => {
  it('reassembles events split anywhere, including inside a multi-byte character and a CRLF', async () => {
    const text = 'data: {"a":"héllo"}\r\n\r\n: keep-alive\n\nevent: x\ndata: one\ndata: two\n\ndata: [DONE]\n\n';
    const encoded = new TextEncoder().encode(text);
    const pieces: Uint8Array[] = [];
    for (let i = 0; i < encoded.length; i += 3) pieces.push(encoded.slice(i, i + 3));
    const split = (async function* () {
      yield* pieces;
    })();
    expect(await all(sseData(split))).toEqual(['{"a":"héllo"}', 'one\ntwo', '[DONE]']);
  });

  it('drops a line cut off by the end of the stream, keeps complete lines without a closing blank line', async () => {
    expect(await all(sseData(bytes('data: {"cho')))).toEqual([]);
    expect(await all(sseData(bytes('data: [DONE]\n')))).toEqual(['[DONE]']);
  });
});

describe('readCompletionStream', () => {
  it('accepts a stream that ends after finish_reason without [DONE], and usage before the finish', async () => {
    const completion = await collectCompletion(
      readCompletionStream(
        events(
          openAIChunk.usage({ inputTokens: 2, outputTokens: 1 }),
          openAIChunk.text('Hi'),
          openAIChunk.finish('length'),
        ),
        context,
      ),
    );
    expect(completion).toEqual({
      content: 'Hi',
      toolCalls: [],
      usage: { inputTokens: 2, outputTokens: 1 },
      finishReason: 'length',
    });
  });

  it('gives a tool call without an id a positional one and empty arguments an empty object', async () => {
    const delta = openAIChunk.delta({ tool_calls: [{ function: { name: 'now', arguments: '' } }] });
    const completion = await collectCompletion(readCompletionStream(events(delta, '[DONE]'), context));
    expect(completion.toolCalls).toEqual([{ id: 'call_0', name: 'now', arguments: {} }]);
    expect(completion.finishReason).toBe('tool_calls');
  });

  it('reports an error object inside the stream as provider_protocol', async () => {
    const stream = readCompletionStream(events(JSON.stringify({ error: { message: 'context too long' } })), context);
    await expect(collectCompletion(stream)).rejects.toThrow(
      'openai provider: the stream reported an error: context too long',
    );
  });

  it('rejects a tool call without a name', async () => {
    const delta = openAIChunk.delta(
      { tool_calls: [{ index: 0, id: 'c', function: { arguments: '{}' } }] },
      'tool_calls',
    );
    await expect(collectCompletion(readCompletionStream(events(delta), context))).rejects.toThrow(
      'tool call #0 arrived without a function name',
    );
  });
});
