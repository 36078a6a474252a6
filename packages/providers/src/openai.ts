import { ErrorCode } from '@demiurge/contracts';
import { CallControl, describeNetworkError } from './call-control.js';
import { cancelledError, ProviderError } from './errors.js';
import { excerpt, readCompletionStream, sseData } from './openai-stream.js';
import { toOpenAIRequest } from './openai-wire.js';
import type { CompletionChunk, CompletionRequest, ModelProvider } from './provider.js';
import { isRetryableStatus, parseRetryAfter, retryDelayMs, sleep } from './retry.js';

export interface OpenAIProviderOptions {
  /** e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`; requests go to `${baseUrl}/chat/completions`. */
  readonly baseUrl: string;
  readonly model: string;
  /** Sent as `Authorization: Bearer`; defaults to `env.OPENAI_API_KEY`; no header when neither is set. */
  readonly apiKey?: string | undefined;
  /** Abort when no response arrives, or the stream sends nothing, for this long. Default 120 000. */
  readonly timeoutMs?: number | undefined;
  /** Retries after a 429, a 5xx or a connection error, before any response streamed. Default 3. */
  readonly maxRetries?: number | undefined;
  /** The first backoff; each retry doubles it, with jitter. Default 500. */
  readonly retryBaseMs?: number | undefined;
  /** The cap on one backoff wait, `Retry-After` included. Default 30 000. */
  readonly maxRetryDelayMs?: number | undefined;
  /** Extra request headers (e.g. for a gateway). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** Defaults to the global `fetch`. */
  readonly fetch?: typeof fetch | undefined;
  /** Where `OPENAI_API_KEY` is read from; defaults to `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
}

/**
 * A provider for any OpenAI-compatible Chat Completions endpoint (OpenAI, vLLM, Ollama, llama.cpp, LM Studio,
 * gateways), always streaming. It retries 429 and 5xx answers and connection failures with exponential
 * backoff (honouring `Retry-After`), but never a request whose response has started: every failure after
 * that is thrown as a {@link ProviderError}.
 *
 * @example
 * ```ts
 * const provider = createOpenAIProvider({ baseUrl: 'http://127.0.0.1:11434/v1', model: 'qwen3:8b' });
 * for await (const chunk of provider.complete({ messages: [{ role: 'user', content: 'hi' }], tools: [] })) {
 *   if (chunk.type === 'text') process.stdout.write(chunk.text);
 * }
 * ```
 */
export function createOpenAIProvider(options: OpenAIProviderOptions): ModelProvider {
  return new OpenAIProvider(options);
}

const PROVIDER = 'openai';

class OpenAIProvider implements ModelProvider {
  readonly name = PROVIDER;
  readonly model: string;
  private readonly url: string;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly retryBaseMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly fetch: typeof fetch;

  constructor(options: OpenAIProviderOptions) {
    this.model = options.model;
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    const apiKey = options.apiKey ?? (options.env ?? process.env).OPENAI_API_KEY;
    this.headers = {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
      ...options.headers,
    };
    this.timeoutMs = options.timeoutMs ?? 120_000;
    this.maxRetries = options.maxRetries ?? 3;
    this.retryBaseMs = options.retryBaseMs ?? 500;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  async *complete(request: CompletionRequest): AsyncGenerator<CompletionChunk> {
    const call = new CallControl({ provider: PROVIDER, url: this.url, timeoutMs: this.timeoutMs }, request.signal);
    try {
      if (call.aborted) throw cancelledError(PROVIDER, request.signal?.reason);
      const body = JSON.stringify(toOpenAIRequest(this.model, request.messages, request.tools));
      const response = await this.send(body, call, request.onRetry);
      yield* readCompletionStream(sseData(bodyBytes(response, call)), { provider: PROVIDER, url: this.url });
    } catch (error) {
      throw call.translate(error);
    } finally {
      call.dispose();
    }
  }

  /** Sends the request until a 2xx response arrives, retrying what may be retried. */
  private async send(body: string, call: CallControl, onRetry?: CompletionRequest['onRetry']): Promise<Response> {
    for (let attempt = 1; ; attempt++) {
      call.arm('response');
      let response: Response;
      try {
        response = await this.fetch(this.url, { method: 'POST', headers: this.headers, body, signal: call.signal });
      } catch (error) {
        call.disarm();
        if (call.aborted) throw call.translate(error);
        if (attempt > this.maxRetries) {
          throw new ProviderError({
            code: ErrorCode.ProviderDisconnected,
            provider: PROVIDER,
            detail: `could not reach ${this.url}${times(attempt)}: ${describeNetworkError(error)}`,
            retryable: true,
            attempts: attempt,
            cause: error,
          });
        }
        onRetry?.({ attempt, reason: describeNetworkError(error) });
        await this.backoff(attempt, undefined, call);
        continue;
      }
      if (response.ok) {
        await rejectNonStream(response);
        return response;
      }
      const text = await response.text().catch((error: unknown) => {
        if (call.aborted) throw call.translate(error);
        return '';
      });
      call.disarm();
      const { status } = response;
      if (isRetryableStatus(status) && attempt <= this.maxRetries) {
        onRetry?.({ attempt, reason: `HTTP ${status}` });
        await this.backoff(attempt, parseRetryAfter(response.headers), call);
        continue;
      }
      throw new ProviderError({
        code: ErrorCode.ProviderHttp,
        provider: PROVIDER,
        detail: `HTTP ${status} from ${this.url}${times(attempt)}: ${excerpt(text, 500) || '(empty body)'}`,
        retryable: isRetryableStatus(status),
        status,
        attempts: attempt,
      });
    }
  }

  private async backoff(attempt: number, retryAfterMs: number | undefined, call: CallControl): Promise<void> {
    const ms = retryDelayMs(attempt - 1, { baseMs: this.retryBaseMs, maxMs: this.maxRetryDelayMs, retryAfterMs });
    try {
      await sleep(ms, call.signal);
    } catch (error) {
      throw call.translate(error);
    }
  }
}

function times(attempts: number): string {
  return attempts > 1 ? ` after ${attempts} attempts` : '';
}

/** A server that ignored `stream: true` and answered with one JSON document. */
async function rejectNonStream(response: Response): Promise<void> {
  const type = response.headers.get('content-type') ?? '';
  if (!type.includes('application/json')) return;
  const text = await response.text().catch(() => '');
  throw new ProviderError({
    code: ErrorCode.ProviderProtocol,
    provider: PROVIDER,
    detail: `expected a text/event-stream response from ${response.url}, got ${type}: ${excerpt(text)}`,
    retryable: false,
  });
}

/** The response body's bytes; each chunk restarts the no-progress timer. */
async function* bodyBytes(response: Response, call: CallControl): AsyncGenerator<Uint8Array> {
  if (response.body === null) return;
  call.arm('stream');
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      call.arm('stream');
      yield value;
    }
  } finally {
    call.disarm();
    await reader.cancel().catch(() => undefined);
  }
}
