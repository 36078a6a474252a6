/** One message of the model context, in the shape every provider adapter translates from. */
export type ChatMessage =
  | {
      readonly role: 'system';
      readonly content: string;
      /**
       * Set on the leading system message of a compacted context (it carries the summary): how many assistant
       * messages the summary replaced. Adapters do not send it; the fake provider counts them as answered.
       */
      readonly compacted?: { readonly assistantMessages: number };
    }
  | { readonly role: 'user'; readonly content: string }
  | { readonly role: 'assistant'; readonly content: string; readonly toolCalls?: readonly ToolCallRequest[] }
  | { readonly role: 'tool'; readonly toolCallId: string; readonly name: string; readonly content: string };

/** A tool call the model asked for. `id` is the provider's call id, echoed back on the tool message. */
export interface ToolCallRequest {
  readonly id: string;
  readonly name: string;
  /** Parsed JSON arguments (an object for every well-behaved model); the raw text when they were not JSON. */
  readonly arguments: unknown;
  /**
   * Set when the model's arguments were not valid JSON: the parse error. `arguments` then holds the raw text.
   * The call is still returned (the turn engine answers it with a tool error so the model can correct itself);
   * sent back to a server, its arguments read `{}`, since servers parse them.
   */
  readonly argumentsError?: string;
}

/** A tool as the model sees it: name, description and the JSON Schema of its input. */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
}

export interface Usage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

/** Streamed pieces of one completion, in order; `done` is always last on success. */
export type CompletionChunk =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'tool_call'; readonly call: ToolCallRequest }
  | { readonly type: 'done'; readonly usage: Usage; readonly finishReason: string };

export interface CompletionRequest {
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly ToolSpec[];
  /** Aborting stops the request; the stream then throws a ProviderError with code `provider_cancelled`. */
  readonly signal?: AbortSignal;
  /**
   * `compaction`: the request asks for a summary of the conversation (the engine compacting a session's context);
   * adapters send it like any other, the fake provider answers it with a deterministic summary. Default `turn`.
   */
  readonly purpose?: 'turn' | 'compaction';
  /**
   * What the request is for (`turnId`, `runId`, `sessionId`, `stepId`), for observability (the host's model
   * request spans); adapters do not send them.
   */
  readonly labels?: Readonly<Record<string, string>>;
  /**
   * Told before each retry of the request (`attempt` is the attempt that failed, 1-based; `reason` what failed),
   * so a caller can count them; adapters that do not retry never call it.
   */
  readonly onRetry?: (retry: { readonly attempt: number; readonly reason: string }) => void;
}

/** The port between the turn engine and a model. Adapters must not retry a request once it streamed content. */
export interface ModelProvider {
  /** e.g. `fake` or `openai`. */
  readonly name: string;
  readonly model: string;
  /**
   * The model's context window in tokens, when the configuration says it (`contextWindow`); else the engine uses
   * `contextWindowFor(model)`.
   */
  readonly contextWindow?: number;
  complete(request: CompletionRequest): AsyncIterable<CompletionChunk>;
}

/** A whole completion, gathered from the stream. */
export interface Completion {
  readonly content: string;
  readonly toolCalls: readonly ToolCallRequest[];
  readonly usage: Usage;
  readonly finishReason: string;
}
