import { describe, expect, it } from 'vitest';
import { collectCompletion } from './collect.js';
import { contextWindowFor, estimateTokens, FALLBACK_CONTEXT_WINDOW } from './context-window.js';
import { createFakeProvider, fakeSummary } from './fake.js';
import { providerFromConfig } from './provider-config.js';

describe('context windows', () => {
  it('knows the window of known model families by name, and errs small for an unknown one', () => {
    expect(contextWindowFor('gpt-4o-mini')).toBe(128_000);
    expect(contextWindowFor('openai/gpt-4.1-mini')).toBe(1_047_576);
    expect(contextWindowFor('gpt-4')).toBe(8_192);
    expect(contextWindowFor('claude-sonnet-4')).toBe(200_000);
    expect(contextWindowFor('qwen3:8b')).toBe(40_960);
    expect(contextWindowFor('llama3.1:8b')).toBe(131_072);
    expect(contextWindowFor('fake-1')).toBe(32_768);
    expect(contextWindowFor('my-own-model')).toBe(FALLBACK_CONTEXT_WINDOW);
  });

  it('the config sets the window; without it the provider leaves it to the name', async () => {
    expect((await providerFromConfig({ provider: 'fake', contextWindow: 2_000 })).contextWindow).toBe(2_000);
    expect((await providerFromConfig({ provider: 'fake' })).contextWindow).toBeUndefined();
    const openai = await providerFromConfig({ provider: 'openai', model: 'm', contextWindow: 9_000 }, { env: {} });
    expect(openai).toMatchObject({ name: 'openai', model: 'm', contextWindow: 9_000 });
    await expect(providerFromConfig({ provider: 'fake', contextWindow: 0 })).rejects.toThrow(/contextWindow/);
  });
});

describe('estimateTokens', () => {
  it('counts 3.5 characters a token plus 4 a message, tool calls and tool specs included', () => {
    expect(estimateTokens({ messages: [{ role: 'user', content: 'x'.repeat(35) }], tools: [] })).toBe(14);
    const withCall = estimateTokens({
      messages: [{ role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'ls', arguments: { a: 1 } }] }],
      tools: [{ name: 'ls', description: 'list', parameters: { type: 'object' } }],
    });
    // 'ls' + '{"a":1}' = 9, 'ls' + 'list' + '{"type":"object"}' = 23: 32 chars -> 10 tokens, + 4
    expect(withCall).toBe(14);
  });
});

describe('the fake summary', () => {
  it('answers a compaction request deterministically, never from the script, keeping the earlier summary', async () => {
    const provider = createFakeProvider({ script: [{ content: 'scripted' }] });
    const messages = [
      { role: 'system' as const, content: 'You compact a conversation' },
      {
        role: 'user' as const,
        content: 'Earlier summary:\n[fake summary] requests: one\n\nConversation:\nuser: two\nassistant: b',
      },
    ];
    const done = await collectCompletion(provider.complete({ messages, tools: [], purpose: 'compaction' }));
    expect(done.content).toBe('[fake summary] requests: one | two');
    expect(fakeSummary([{ role: 'user', content: 'nothing here' }])).toBe('[fake summary] requests: (none)');
  });

  it('counts the answers a compacted context replaced, so a script continues at the right step', async () => {
    const provider = createFakeProvider({
      script: [{ content: 'first' }, { content: 'second' }, { content: 'third' }],
    });
    const messages = [
      { role: 'system' as const, content: 'summary', compacted: { assistantMessages: 1 } },
      { role: 'user' as const, content: 'b' },
      { role: 'assistant' as const, content: 'second' },
      { role: 'user' as const, content: 'c' },
    ];
    expect((await collectCompletion(provider.complete({ messages, tools: [] }))).content).toBe('third');
  });
});
