import { ErrorCode } from '@demiurge/contracts';
import { cancelledError, ProviderError } from './errors.js';

type Phase = 'response' | 'stream';

/**
 * The abort side of one model request: one signal that fires when the caller aborts or when the request
 * made no progress for `timeoutMs` (no response yet, or no stream data since the last chunk), and the
 * translation of whatever that abort threw into a {@link ProviderError}.
 */
export class CallControl {
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timedOutIn: Phase | undefined;
  private readonly onCallerAbort = (): void => this.controller.abort(this.callerSignal?.reason);

  constructor(
    private readonly context: { provider: string; url: string; timeoutMs: number },
    private readonly callerSignal: AbortSignal | undefined,
  ) {
    if (callerSignal?.aborted) this.controller.abort(callerSignal.reason);
    else callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  /** (Re)starts the no-progress timer. */
  arm(phase: Phase): void {
    this.disarm();
    this.timer = setTimeout(() => {
      this.timedOutIn = phase;
      this.controller.abort(new Error(`no progress for ${this.context.timeoutMs} ms`));
    }, this.context.timeoutMs);
  }

  disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * The error to throw for `error`: a ProviderError as is; after an abort `provider_cancelled` (caller) or
   * `provider_timeout` (timer); otherwise the connection broke: `provider_disconnected`.
   */
  translate(error: unknown): ProviderError {
    if (error instanceof ProviderError) return error;
    const { provider, url, timeoutMs } = this.context;
    if (this.callerSignal?.aborted) return cancelledError(provider, error);
    if (this.timedOutIn !== undefined) {
      return new ProviderError({
        code: ErrorCode.ProviderTimeout,
        provider,
        detail:
          this.timedOutIn === 'response'
            ? `no response from ${url} within ${timeoutMs} ms`
            : `the stream from ${url} stalled: no data for ${timeoutMs} ms`,
        retryable: true,
        cause: error,
      });
    }
    return new ProviderError({
      code: ErrorCode.ProviderDisconnected,
      provider,
      detail: `the connection to ${url} broke mid-stream: ${describeNetworkError(error)}`,
      retryable: true,
      cause: error,
    });
  }

  dispose(): void {
    this.disarm();
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
    this.controller.abort();
  }
}

/** `fetch failed (connect ECONNREFUSED 127.0.0.1:9)`: the error and the network cause undici wraps. */
export function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return cause && cause !== error.message ? `${error.message} (${cause})` : error.message;
}
