import { ErrorCode } from '@demiurge/contracts';
import { ProviderError } from './errors.js';
import type { Completion, CompletionChunk, ToolCallRequest } from './provider.js';

/**
 * Reads a completion stream to its end and gathers the text, the tool calls (in order) and the usage.
 * Errors of the stream propagate unchanged; a stream without a final `done` chunk is a `provider_protocol` error.
 *
 * @example
 * ```ts
 * const { content, toolCalls, usage } = await collectCompletion(provider.complete({ messages, tools: [] }));
 * ```
 */
export async function collectCompletion(stream: AsyncIterable<CompletionChunk>): Promise<Completion> {
  let content = '';
  const toolCalls: ToolCallRequest[] = [];
  let done: Extract<CompletionChunk, { type: 'done' }> | undefined;
  for await (const chunk of stream) {
    if (done !== undefined) throw protocolError(`a ${chunk.type} chunk arrived after the done chunk`);
    switch (chunk.type) {
      case 'text':
        content += chunk.text;
        break;
      case 'tool_call':
        toolCalls.push(chunk.call);
        break;
      case 'done':
        done = chunk;
        break;
    }
  }
  if (done === undefined) throw protocolError('the stream ended without a done chunk');
  return { content, toolCalls, usage: done.usage, finishReason: done.finishReason };
}

function protocolError(detail: string): ProviderError {
  return new ProviderError({ code: ErrorCode.ProviderProtocol, provider: 'model', detail, retryable: false });
}
