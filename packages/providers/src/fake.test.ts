import { describe, expect, it } from 'vitest';
import { collectCompletion } from './collect.js';
import { FakeScriptError, ProviderError } from './errors.js';
import { createFakeProvider, type FakeStep } from './fake.js';
import type { ChatMessage, CompletionChunk } from './provider.js';

const script: FakeStep[] = [
  { content: 'Let me list the files.', tool_calls: [{ name: 'list_dir', arguments: { path: '.' } }] },
  {
    tool_calls: [
      { name: 'read_file', arguments: { path: 'a.txt' } },
      { name: 'read_file', arguments: {} },
    ],
  },
  { content: 'All done.' },
];

const user = (content: string): ChatMessage => ({ role: 'user', content });

async function chunksOf(stream: AsyncIterable<CompletionChunk>): Promise<CompletionChunk[]> {
  const chunks: CompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe('createFakeProvider', () => {
  it('streams the first step as word chunks, then its tool calls, then done', async () => {
    const chunks = await chunksOf(createFakeProvider({ script }).complete({ messages: [user('go')], tools: [] }));
    expect(chunks).toEqual([
      { type: 'text', text: 'Let ' },
      { type: 'text', text: 'me ' },
      { type: 'text', text: 'list ' },
      { type: 'text', text: 'the ' },
      { type: 'text', text: 'files.' },
      { type: 'tool_call', call: { id: 'call_0_0', name: 'list_dir', arguments: { path: '.' } } },
      { type: 'done', usage: { inputTokens: 1, outputTokens: 11 }, finishReason: 'tool_calls' },
    ]);
  });

  it('plays the step numbered by the assistant messages already in the transcript', async () => {
    const provider = createFakeProvider({ script });
    const messages: ChatMessage[] = [user('go')];
    const answers = [];
    for (let i = 0; i < script.length; i++) {
      const completion = await collectCompletion(provider.complete({ messages, tools: [] }));
      answers.push(completion);
      messages.push({ role: 'assistant', content: completion.content, toolCalls: completion.toolCalls });
      for (const call of completion.toolCalls) {
        messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: 'ok' });
      }
    }
    expect(answers.map((a) => [a.content, a.toolCalls.map((c) => c.id), a.finishReason])).toEqual([
      ['Let me list the files.', ['call_0_0'], 'tool_calls'],
      ['', ['call_1_0', 'call_1_1'], 'tool_calls'],
      ['All done.', [], 'stop'],
    ]);
    expect(answers[1]?.toolCalls[1]?.arguments).toEqual({});
  });

  it('is deterministic: the same transcript gets the same answer from any instance (recovery)', async () => {
    const transcript: ChatMessage[] = [
      user('go'),
      { role: 'assistant', content: 'Let me list the files.', toolCalls: [] },
      user('and then?'),
    ];
    const first = await chunksOf(createFakeProvider({ script }).complete({ messages: transcript, tools: [] }));
    const again = await chunksOf(createFakeProvider({ script }).complete({ messages: transcript, tools: [] }));
    expect(again).toEqual(first);
    expect(first.filter((c) => c.type === 'tool_call')).toHaveLength(2);
  });

  it('echoes the last user message once the script is exhausted, or without one', async () => {
    const exhausted = createFakeProvider({ script: [{ content: 'only step' }] });
    const transcript: ChatMessage[] = [user('first'), { role: 'assistant', content: 'only step' }, user('second')];
    expect((await collectCompletion(exhausted.complete({ messages: transcript, tools: [] }))).content).toBe(
      '[fake] second',
    );
    const bare = createFakeProvider();
    expect(bare).toMatchObject({ name: 'fake', model: 'fake-1' });
    expect(await collectCompletion(bare.complete({ messages: [user('Hello there')], tools: [] }))).toEqual({
      content: '[fake] Hello there',
      toolCalls: [],
      usage: { inputTokens: 3, outputTokens: 5 },
      finishReason: 'stop',
    });
  });

  it('throws provider_cancelled when the signal is aborted, before or during the stream', async () => {
    const provider = createFakeProvider({ script, model: 'scripted' });
    expect(provider.model).toBe('scripted');
    await expect(
      collectCompletion(provider.complete({ messages: [user('go')], tools: [], signal: AbortSignal.abort() })),
    ).rejects.toMatchObject({ name: 'ProviderError', code: 'provider_cancelled' });

    const controller = new AbortController();
    const seen: CompletionChunk[] = [];
    const error = await (async () => {
      for await (const chunk of provider.complete({ messages: [user('go')], tools: [], signal: controller.signal })) {
        seen.push(chunk);
        controller.abort();
      }
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).message).toBe('fake provider: the request was cancelled by its caller');
    expect(seen).toHaveLength(1);
  });

  it('rejects an inline script that does not match the step format, naming the field', () => {
    const bad = [{ content: 'ok' }, { tool_calls: [{ arguments: {} }] }] as unknown as FakeStep[];
    expect(() => createFakeProvider({ script: bad })).toThrow(FakeScriptError);
    expect(() => createFakeProvider({ script: bad })).toThrow(
      /invalid fake script \(inline script\) at \[1\]\.tool_calls\[0\]\.name/,
    );
  });
});

describe('createFakeProvider: conversations by match', () => {
  it('plays the steps whose match the first user message contains, each conversation from its own start', async () => {
    const provider = createFakeProvider({
      script: [
        { content: 'parent step 0', tool_calls: [{ name: 'delegate_task', arguments: { goal: 'List risks' } }] },
        { match: 'List risks', content: 'child step 0' },
        { content: 'parent step 1' },
        { match: 'List risks', content: 'child step 1' },
      ],
    });
    const answer = async (messages: ChatMessage[]) =>
      (await collectCompletion(provider.complete({ messages, tools: [] }))).content;
    expect(await answer([user('Plan the trip')])).toBe('parent step 0');
    expect(await answer([{ role: 'system', content: 'sys' }, user('List risks of the plan')])).toBe('child step 0');
    const parent: ChatMessage[] = [user('Plan the trip'), { role: 'assistant', content: 'parent step 0' }];
    expect(await answer(parent)).toBe('parent step 1');
    const child: ChatMessage[] = [user('List risks of the plan'), { role: 'assistant', content: 'x' }, user('more')];
    expect(await answer(child)).toBe('child step 1');
    expect(await answer([...child, { role: 'assistant', content: 'y' }, user('again')])).toBe('[fake] again');
  });
});
