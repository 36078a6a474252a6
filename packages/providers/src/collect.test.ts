import { describe, expect, it } from 'vitest';
import { collectCompletion } from './collect.js';
import type { CompletionChunk } from './provider.js';

async function* stream(...chunks: CompletionChunk[]): AsyncGenerator<CompletionChunk> {
  yield* chunks;
}

const done: CompletionChunk = { type: 'done', usage: { inputTokens: 4, outputTokens: 2 }, finishReason: 'stop' };

describe('collectCompletion', () => {
  it('joins the text, keeps the tool calls in order and takes usage from done', async () => {
    const call = (id: string) => ({ type: 'tool_call', call: { id, name: 't', arguments: {} } }) as const;
    expect(
      await collectCompletion(
        stream({ type: 'text', text: 'a' }, call('1'), { type: 'text', text: 'b' }, call('2'), done),
      ),
    ).toEqual({
      content: 'ab',
      toolCalls: [
        { id: '1', name: 't', arguments: {} },
        { id: '2', name: 't', arguments: {} },
      ],
      usage: { inputTokens: 4, outputTokens: 2 },
      finishReason: 'stop',
    });
  });

  it('rejects a stream without done, or with chunks after it', async () => {
    await expect(collectCompletion(stream({ type: 'text', text: 'a' }))).rejects.toMatchObject({
      code: 'provider_protocol',
      message: 'model provider: the stream ended without a done chunk',
    });
    await expect(collectCompletion(stream(done, { type: 'text', text: 'late' }))).rejects.toThrow(
      'a text chunk arrived after the done chunk',
    );
  });
});
