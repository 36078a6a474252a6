import { ErrorCode, formatPath } from '@demiurge/contracts';
import { ProviderError } from './errors.js';
import { OpenAIStreamChunk } from './openai-wire.js';
import type { CompletionChunk, ToolCallRequest, Usage } from './provider.js';

/**
 * Splits a server-sent-events byte stream into the `data` payloads of its events (multi-line data joined
 * with `\n`). Comments and other fields are skipped. A line cut off by the end of the stream is dropped:
 * a truncated chunk then reads as a disconnect, not as a malformed chunk.
 */
export async function* sseData(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  for await (const piece of bytes) {
    buffer += decoder.decode(piece, { stream: true });
    let newline = buffer.indexOf('\n');
    while (newline >= 0) {
      const raw = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf('\n');
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (line === '') {
        if (data.length > 0) yield data.join('\n');
        data = [];
        continue;
      }
      const value = dataField(line);
      if (value !== undefined) data.push(value);
    }
  }
  // An event whose lines all arrived but whose closing blank line did not: accept it.
  if (data.length > 0) yield data.join('\n');
}

/** The value of a `data:` line; `undefined` for comments and other fields. */
function dataField(line: string): string | undefined {
  const colon = line.indexOf(':');
  if ((colon < 0 ? line : line.slice(0, colon)) !== 'data') return undefined;
  const value = colon < 0 ? '' : line.slice(colon + 1);
  return value.startsWith(' ') ? value.slice(1) : value;
}

interface PartialCall {
  id: string;
  name: string;
  args: string;
}

/**
 * Reads Chat Completions stream events into completion chunks: text as it arrives, each tool call once it is
 * complete (at `finish_reason`, or at the end), then `done` with the usage.
 */
export async function* readCompletionStream(
  events: AsyncIterable<string>,
  context: { provider: string; url: string },
): AsyncGenerator<CompletionChunk> {
  const { provider } = context;
  const protocol = (detail: string): ProviderError =>
    new ProviderError({ code: ErrorCode.ProviderProtocol, provider, detail, retryable: false });
  const partial = new Map<number, PartialCall>();
  let usage: Usage = { inputTokens: 0, outputTokens: 0 };
  let finishReason: string | undefined;
  let sawDone = false;
  let callsEmitted = false;
  let callCount = 0;

  const completeCalls = function* (): Generator<CompletionChunk> {
    callsEmitted = true;
    for (const index of [...partial.keys()].sort((a, b) => a - b)) {
      const call = toToolCall(index, partial.get(index)!, protocol);
      callCount++;
      yield { type: 'tool_call', call };
    }
  };

  for await (const data of events) {
    if (data.trim() === '[DONE]') {
      sawDone = true;
      break;
    }
    const chunk = parseChunk(data, protocol);
    if (chunk.error)
      throw protocol(`the stream reported an error: ${chunk.error.message ?? JSON.stringify(chunk.error)}`);
    if (chunk.usage) usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
    for (const choice of chunk.choices ?? []) {
      if ((choice.index ?? 0) !== 0) continue;
      const text = choice.delta?.content;
      if (text) yield { type: 'text', text };
      const deltas = choice.delta?.tool_calls ?? [];
      if (deltas.length > 0 && callsEmitted) throw protocol('a tool call delta arrived after finish_reason');
      deltas.forEach((delta, position) => {
        const index = delta.index ?? position;
        const call = partial.get(index) ?? { id: '', name: '', args: '' };
        if (delta.id && call.id === '') call.id = delta.id;
        if (delta.function?.name && call.name === '') call.name = delta.function.name;
        if (delta.function?.arguments) call.args += delta.function.arguments;
        partial.set(index, call);
      });
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
    if (finishReason !== undefined && !callsEmitted) yield* completeCalls();
  }

  if (!sawDone && finishReason === undefined) {
    throw new ProviderError({
      code: ErrorCode.ProviderDisconnected,
      provider,
      detail: `the stream from ${context.url} ended before [DONE] or a finish_reason`,
      retryable: true,
    });
  }
  if (!callsEmitted) yield* completeCalls();
  yield { type: 'done', usage, finishReason: finishReason ?? (callCount > 0 ? 'tool_calls' : 'stop') };
}

function parseChunk(data: string, protocol: (detail: string) => ProviderError): OpenAIStreamChunk {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch (error) {
    throw protocol(`malformed stream chunk: ${messageOf(error)} in "data: ${excerpt(data)}"`);
  }
  const result = OpenAIStreamChunk.safeParse(json);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw protocol(
    `malformed stream chunk: ${formatPath(issue?.path ?? [])}: ${issue?.message ?? 'invalid'} in "data: ${excerpt(data)}"`,
  );
}

function toToolCall(index: number, call: PartialCall, protocol: (detail: string) => ProviderError): ToolCallRequest {
  if (call.name === '') throw protocol(`tool call #${index} arrived without a function name`);
  const id = call.id === '' ? `call_${index}` : call.id;
  let args: unknown = {};
  if (call.args.trim() !== '') {
    try {
      args = JSON.parse(call.args);
    } catch (error) {
      // Not the stream's fault: the model wrote bad JSON. The call goes on with the error, to be answered.
      return {
        id,
        name: call.name,
        arguments: call.args,
        argumentsError: `the arguments are not valid JSON: ${messageOf(error)} in "${excerpt(call.args)}"`,
      };
    }
  }
  return { id, name: call.name, arguments: args };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The start of a text, for an error message. */
export function excerpt(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
