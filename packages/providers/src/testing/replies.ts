import type { Usage } from '../provider.js';

/**
 * What the test server does with one request:
 * - `stream`: a `200 text/event-stream` writing each of `events` as `data: <event>`, then by `end`:
 *   `done` writes `data: [DONE]` and ends, `close` ends without it, `destroy` destroys the socket mid-stream,
 *   `hang` keeps the connection open and silent;
 * - `status`: that status with `body` and `headers`;
 * - `hang`: never answers at all.
 */
export type ScriptedReply =
  | {
      readonly kind: 'stream';
      readonly events: readonly string[];
      readonly end: 'done' | 'close' | 'destroy' | 'hang';
      /** A pause before each event. */
      readonly delayMs?: number;
    }
  | {
      readonly kind: 'status';
      readonly status: number;
      readonly body: string;
      readonly headers: Readonly<Record<string, string>>;
    }
  | { readonly kind: 'hang' };

export interface ScriptedToolCall {
  /** Defaults to `call_<index>`. */
  readonly id?: string;
  readonly name: string;
  /** JSON-encoded into the streamed arguments; a string is sent as is (to test bad JSON). */
  readonly arguments: unknown;
}

const DEFAULT_USAGE: Usage = { inputTokens: 10, outputTokens: 5 };

/** `chat.completion.chunk` payloads, as JSON text. */
export const openAIChunk = {
  delta(delta: Record<string, unknown>, finishReason: string | null = null): string {
    return JSON.stringify({
      id: 'chatcmpl-test',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'test-model',
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    });
  },
  text(content: string): string {
    return openAIChunk.delta({ content });
  },
  finish(reason: string): string {
    return openAIChunk.delta({}, reason);
  },
  usage(usage: Usage): string {
    return JSON.stringify({
      id: 'chatcmpl-test',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'test-model',
      choices: [],
      usage: {
        prompt_tokens: usage.inputTokens,
        completion_tokens: usage.outputTokens,
        total_tokens: usage.inputTokens + usage.outputTokens,
      },
    });
  },
};

/**
 * Builders for {@link ScriptedReply}.
 *
 * @example
 * ```ts
 * server.enqueue(reply.status(500), reply.text('Hello there', { usage: { inputTokens: 3, outputTokens: 2 } }));
 * ```
 */
export const reply = {
  /** Streams `text` (a string is split into words, an array is sent piece by piece), then finish, usage, `[DONE]`. */
  text(
    text: string | readonly string[],
    options: { usage?: Usage; finishReason?: string; delayMs?: number } = {},
  ): ScriptedReply {
    const pieces = typeof text === 'string' ? text.split(/(?<=\s)(?=\S)/) : text;
    return {
      kind: 'stream',
      events: [
        openAIChunk.delta({ role: 'assistant', content: '' }),
        ...pieces.map(openAIChunk.text),
        openAIChunk.finish(options.finishReason ?? 'stop'),
        openAIChunk.usage(options.usage ?? DEFAULT_USAGE),
      ],
      end: 'done',
      ...(options.delayMs === undefined ? {} : { delayMs: options.delayMs }),
    };
  },

  /**
   * Streams tool calls the way OpenAI does: the first delta of each call carries its id and name, the
   * arguments follow in fragments of `fragmentSize` characters. Optional leading `text`.
   */
  toolCalls(
    calls: readonly ScriptedToolCall[],
    options: { text?: string; fragmentSize?: number; usage?: Usage } = {},
  ): ScriptedReply {
    const size = options.fragmentSize ?? 4;
    const events: string[] = [openAIChunk.delta({ role: 'assistant', content: null })];
    if (options.text !== undefined) events.push(openAIChunk.text(options.text));
    calls.forEach((call, index) => {
      const id = call.id ?? `call_${index}`;
      events.push(
        openAIChunk.delta({
          tool_calls: [{ index, id, type: 'function', function: { name: call.name, arguments: '' } }],
        }),
      );
      const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
      for (let at = 0; at < args.length; at += size) {
        events.push(openAIChunk.delta({ tool_calls: [{ index, function: { arguments: args.slice(at, at + size) } }] }));
      }
    });
    events.push(openAIChunk.finish('tool_calls'), openAIChunk.usage(options.usage ?? DEFAULT_USAGE));
    return { kind: 'stream', events, end: 'done' };
  },

  /** Streams `before` as text, then one chunk that is not JSON (`{bad` by default). */
  malformed(raw = '{bad', before = 'Hello'): ScriptedReply {
    return { kind: 'stream', events: [openAIChunk.text(before), raw], end: 'done' };
  },

  /** Streams `before` as text, then destroys the socket: no finish, no `[DONE]`. */
  disconnect(before = 'Hello, I was about to'): ScriptedReply {
    return { kind: 'stream', events: [openAIChunk.text(before)], end: 'destroy' };
  },

  /** Answers `status` with a JSON error body (or `body`). */
  status(status: number, body?: string, headers: Readonly<Record<string, string>> = {}): ScriptedReply {
    const text = body ?? JSON.stringify({ error: { message: `scripted status ${status}`, type: 'test_error' } });
    return { kind: 'status', status, body: text, headers: { 'content-type': 'application/json', ...headers } };
  },

  /** 429 with `Retry-After: <seconds>`. */
  rateLimited(retryAfterSeconds: number): ScriptedReply {
    return reply.status(429, undefined, { 'retry-after': String(retryAfterSeconds) });
  },

  /** Never answers; with `before`, sends the headers and that text first, then goes silent. */
  hang(before?: string): ScriptedReply {
    if (before === undefined) return { kind: 'hang' };
    return { kind: 'stream', events: [openAIChunk.text(before)], end: 'hang' };
  },

  /** Raw `data:` payloads, for anything the other builders do not cover. */
  events(events: readonly string[], end: 'done' | 'close' | 'destroy' | 'hang' = 'done'): ScriptedReply {
    return { kind: 'stream', events, end };
  },
};
