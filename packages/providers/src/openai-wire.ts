import { z } from 'zod';
import type { ChatMessage, ToolSpec } from './provider.js';

/** A message in the Chat Completions request format. */
export type OpenAIMessage =
  | { role: 'system' | 'user'; content: string }
  | {
      role: 'assistant';
      content: string | null;
      tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
    }
  | { role: 'tool'; tool_call_id: string; content: string };

/** The body POSTed to `/chat/completions`. */
export interface OpenAIChatRequest {
  model: string;
  messages: OpenAIMessage[];
  tools?: { type: 'function'; function: { name: string; description: string; parameters: Record<string, unknown> } }[];
  stream: true;
  stream_options: { include_usage: true };
}

/** Translates the port's request into a streaming Chat Completions body. */
export function toOpenAIRequest(
  model: string,
  messages: readonly ChatMessage[],
  tools: readonly ToolSpec[],
): OpenAIChatRequest {
  const body: OpenAIChatRequest = {
    model,
    messages: messages.map(toOpenAIMessage),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (tools.length > 0) {
    body.tools = tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
  }
  return body;
}

function toOpenAIMessage(message: ChatMessage): OpenAIMessage {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant': {
      const calls = message.toolCalls ?? [];
      if (calls.length === 0) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        // The canonical form of a tool-calling turn without text is `content: null`.
        content: message.content === '' ? null : message.content,
        tool_calls: calls.map((call) => ({
          id: call.id,
          type: 'function',
          // Bad JSON from the model is not sent back: servers parse these arguments (and would refuse the request).
          function: {
            name: call.name,
            arguments: call.argumentsError !== undefined ? '{}' : JSON.stringify(call.arguments ?? {}),
          },
        })),
      };
    }
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

/** One streamed `chat.completion.chunk`, read leniently: unknown fields are ignored, nulls are allowed. */
export const OpenAIStreamChunk = z.object({
  choices: z
    .array(
      z.object({
        index: z.number().int().nullish(),
        delta: z
          .object({
            content: z.string().nullish(),
            tool_calls: z
              .array(
                z.object({
                  index: z.number().int().nullish(),
                  id: z.string().nullish(),
                  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
                }),
              )
              .nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: z.object({ prompt_tokens: z.number(), completion_tokens: z.number() }).nullish(),
  error: z.object({ message: z.string().optional() }).loose().nullish(),
});
export type OpenAIStreamChunk = z.output<typeof OpenAIStreamChunk>;
