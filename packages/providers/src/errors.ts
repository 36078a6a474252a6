import { DemiurgeError, ErrorCode, formatPath } from '@demiurge/contracts';

/** The codes a {@link ProviderError} can carry. */
export type ProviderErrorCode =
  | typeof ErrorCode.ProviderHttp
  | typeof ErrorCode.ProviderProtocol
  | typeof ErrorCode.ProviderTimeout
  | typeof ErrorCode.ProviderDisconnected
  | typeof ErrorCode.ProviderCancelled;

export interface ProviderErrorInit {
  readonly code: ProviderErrorCode;
  /** The adapter's name (`openai`, `fake`); it starts the message. */
  readonly provider: string;
  /** What went wrong, without the `<provider> provider:` prefix. */
  readonly detail: string;
  /** Whether sending the same request again later could succeed (the adapter's own retries are already spent). */
  readonly retryable: boolean;
  /** The HTTP status, for `provider_http`. */
  readonly status?: number | undefined;
  /** How many HTTP requests were sent (1 when nothing was retried). */
  readonly attempts?: number | undefined;
  readonly cause?: unknown;
}

/**
 * A model request that failed. `code` says how: `provider_http` (with `status`), `provider_protocol`,
 * `provider_timeout`, `provider_disconnected` or `provider_cancelled`.
 *
 * @example
 * ```ts
 * try { await collectCompletion(provider.complete(request)); }
 * catch (e) { if (e instanceof ProviderError && e.code === 'provider_http') console.error(e.status, e.message); }
 * ```
 */
export class ProviderError extends DemiurgeError {
  override readonly name = 'ProviderError';
  readonly code: ProviderErrorCode;
  readonly provider: string;
  readonly retryable: boolean;
  readonly status: number | undefined;
  readonly attempts: number;

  constructor(init: ProviderErrorInit) {
    super(`${init.provider} provider: ${init.detail}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.provider = init.provider;
    this.retryable = init.retryable;
    this.status = init.status;
    this.attempts = init.attempts ?? 1;
  }
}

/** The request was aborted through its `signal`. */
export function cancelledError(provider: string, cause?: unknown): ProviderError {
  return new ProviderError({
    code: ErrorCode.ProviderCancelled,
    provider,
    detail: 'the request was cancelled by its caller',
    retryable: false,
    cause,
  });
}

/**
 * A fake script file (or inline script) that is unreadable or does not match the step format.
 * `path` is the field path inside the script, `line` the 1-based line when known.
 */
export class FakeScriptError extends DemiurgeError {
  override readonly name = 'FakeScriptError';
  readonly code = ErrorCode.InvalidSpec;
  constructor(
    readonly file: string,
    readonly path: readonly PropertyKey[],
    readonly detail: string,
    readonly line?: number,
    options?: { cause?: unknown },
  ) {
    const where = path.length > 0 ? ` at ${formatPath(path)}` : '';
    const at = line === undefined ? '' : ` (line ${line})`;
    super(`invalid fake script ${file}${where}${at}: ${detail}`, options);
  }
}

/** A provider config that failed validation; `path` names the field. */
export class ProviderConfigError extends DemiurgeError {
  override readonly name = 'ProviderConfigError';
  readonly code = ErrorCode.InvalidSpec;
  constructor(
    readonly path: readonly PropertyKey[],
    readonly detail: string,
  ) {
    super(`invalid provider config${path.length > 0 ? ` at ${formatPath(path)}` : ''}: ${detail}`);
  }
}
