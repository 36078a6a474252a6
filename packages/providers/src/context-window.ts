import type { ChatMessage, CompletionRequest, ToolSpec } from './provider.js';

/**
 * Context windows (in tokens) of known model families, matched in order against the model name (lower case).
 * A model that matches none gets {@link FALLBACK_CONTEXT_WINDOW}; set `contextWindow` in the provider config
 * to say otherwise (a local model served with a bigger or smaller window, a new model).
 */
export const KNOWN_CONTEXT_WINDOWS: readonly (readonly [pattern: RegExp, tokens: number])[] = [
  [/^gpt-4\.1/, 1_047_576],
  [/^gpt-5/, 400_000],
  [/^gpt-4o/, 128_000],
  [/^gpt-4-turbo/, 128_000],
  [/^gpt-4-32k/, 32_768],
  [/^gpt-4/, 8_192],
  [/^gpt-3\.5-turbo/, 16_385],
  [/^(o1|o3|o4)(-|$)/, 200_000],
  [/claude/, 200_000],
  [/gemini/, 1_048_576],
  [/^(meta-)?llama-?3\.[1-3]|llama3\.[1-3]/, 131_072],
  [/llama-?3/, 8_192],
  [/qwen3/, 40_960],
  [/qwen2\.5/, 32_768],
  [/mistral|mixtral/, 32_768],
  [/deepseek/, 65_536],
  [/^fake/, 32_768],
];

/** The window assumed for a model no entry of {@link KNOWN_CONTEXT_WINDOWS} matches: small, so compaction errs early. */
export const FALLBACK_CONTEXT_WINDOW = 8_192;

/**
 * The context window of a model by its name: the first {@link KNOWN_CONTEXT_WINDOWS} entry that matches, else
 * {@link FALLBACK_CONTEXT_WINDOW}. A provider prefix (`openai/gpt-4o`) is ignored.
 * @example
 * contextWindowFor('gpt-4o-mini'); // 128000
 */
export function contextWindowFor(model: string): number {
  const name = model.toLowerCase().replace(/^.*\//, '');
  for (const [pattern, tokens] of KNOWN_CONTEXT_WINDOWS) if (pattern.test(name)) return tokens;
  return FALLBACK_CONTEXT_WINDOW;
}

/** Characters per token of the estimate: 4 is the usual ratio of English prose on BPE tokenizers; 3.5 leaves room for code and JSON. */
export const CHARS_PER_TOKEN = 3.5;
/** Tokens each message costs beyond its text (role and separators of the chat template). */
export const TOKENS_PER_MESSAGE = 4;

/**
 * The estimated size in tokens of a request: every message's text (tool calls' names and arguments included)
 * and every tool's name, description and parameter schema, at {@link CHARS_PER_TOKEN} characters a token, plus
 * {@link TOKENS_PER_MESSAGE} per message. A documented estimate, not a tokenizer: it errs high on prose and is
 * close on code; the compaction threshold leaves the margin.
 * @example
 * estimateTokens({ messages: [{ role: 'user', content: 'hello there' }], tools: [] }); // 8
 */
export function estimateTokens(request: Pick<CompletionRequest, 'messages' | 'tools'>): number {
  let chars = 0;
  for (const message of request.messages) chars += messageChars(message);
  for (const tool of request.tools) chars += toolChars(tool);
  return Math.ceil(chars / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE * request.messages.length;
}

function messageChars(message: ChatMessage): number {
  let n = message.content.length;
  if (message.role === 'assistant') {
    for (const call of message.toolCalls ?? []) n += call.name.length + (JSON.stringify(call.arguments) ?? '').length;
  }
  if (message.role === 'tool') n += message.name.length;
  return n;
}

function toolChars(tool: ToolSpec): number {
  return tool.name.length + tool.description.length + JSON.stringify(tool.parameters).length;
}
