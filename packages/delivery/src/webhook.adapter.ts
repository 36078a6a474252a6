import type { DeliveryAdapter, DeliveryReceipt, OutboundDelivery } from './delivery-adapter.js';
import { DeliveryAdapterError, DeliveryFailureCode, httpFailureCode } from './errors.js';

export interface WebhookAdapterOptions {
  /** Where to POST. */
  readonly url: string | URL;
  /** The channel name it routes as. Default `webhook`. */
  readonly channel?: string;
  /** How long to wait for the answer (headers and body). Default 10 s. */
  readonly timeoutMs?: number;
  /** Extra request headers (authentication...). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The response header holding the receiver's id for the message. Default `x-external-id`. */
  readonly externalRefHeader?: string;
}

/** The JSON body the webhook receives. */
export interface WebhookPayload {
  readonly delivery_id: string;
  readonly session_id: string;
  readonly message_id: string;
  readonly text: string;
}

/**
 * Connection errors raised before a request can have left: nothing was sent, so a retry is safe.
 * Anything else that breaks a request (a reset, a closed socket, a timeout) may come after the receiver
 * got it: an unknown outcome.
 */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * An adapter that POSTs `{ delivery_id, session_id, message_id, text }` as JSON with the header
 * `Idempotency-Key: <deliveryId>` (the same on every attempt). How the answer maps:
 *
 * | answer | result |
 * | --- | --- |
 * | 2xx | sent; `externalRef` from the `externalRefHeader` header, else the JSON body's `id` |
 * | 429, 5xx | retryable failure (`http_<status>`, honouring `Retry-After`) |
 * | other 3xx/4xx | final failure (`http_<status>`) |
 * | refused / host not found before sending | retryable failure (`connection_refused`) |
 * | timeout, reset or abort after the request may have left | unknown outcome (never re-sent) |
 *
 * @example
 * router.bind(sessionId, createWebhookAdapter({ url: 'https://hooks.example.com/demiurge', timeoutMs: 5_000 }));
 */
export function createWebhookAdapter(options: WebhookAdapterOptions): DeliveryAdapter {
  const channel = options.channel ?? 'webhook';
  const url = new URL(options.url);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const refHeader = options.externalRefHeader ?? 'x-external-id';
  const fail = (init: Omit<ConstructorParameters<typeof DeliveryAdapterError>[0], 'channel'>) =>
    new DeliveryAdapterError({ ...init, channel });

  return {
    channel,
    async send(delivery: OutboundDelivery, signal: AbortSignal): Promise<DeliveryReceipt> {
      if (signal.aborted) {
        throw fail({
          code: DeliveryFailureCode.Aborted,
          detail: 'aborted before sending',
          retryable: true,
          unknownOutcome: false,
        });
      }
      const controller = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, timeoutMs);
      const onAbort = () => controller.abort();
      signal.addEventListener('abort', onAbort, { once: true });
      const body: WebhookPayload = {
        delivery_id: delivery.deliveryId,
        session_id: delivery.sessionId,
        message_id: delivery.messageId,
        text: delivery.text,
      };
      try {
        let response: Response;
        try {
          response = await fetch(url, {
            method: 'POST',
            headers: {
              ...options.headers,
              'content-type': 'application/json',
              'idempotency-key': delivery.idempotencyKey,
            },
            body: JSON.stringify(body),
            redirect: 'manual',
            signal: controller.signal,
          });
        } catch (err) {
          throw requestFailure(err, timedOut, timeoutMs, url, fail);
        }
        if (response.status >= 200 && response.status < 300) {
          return await receipt(response, refHeader);
        }
        const text = await response.text().catch(() => '');
        const retryable = response.status === 429 || response.status >= 500;
        throw fail({
          code: httpFailureCode(response.status),
          detail: `${url.origin}${url.pathname} answered HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`,
          retryable,
          unknownOutcome: false,
          status: response.status,
          retryAfterMs: retryable ? retryAfter(response.headers.get('retry-after')) : undefined,
        });
      } finally {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
      }
    },
  };
}

function requestFailure(
  err: unknown,
  timedOut: boolean,
  timeoutMs: number,
  url: URL,
  fail: (init: Omit<ConstructorParameters<typeof DeliveryAdapterError>[0], 'channel'>) => DeliveryAdapterError,
): DeliveryAdapterError {
  const where = `${url.origin}${url.pathname}`;
  if (timedOut) {
    return fail({
      code: DeliveryFailureCode.Timeout,
      detail: `no answer from ${where} within ${timeoutMs} ms; the request may have arrived`,
      retryable: false,
      unknownOutcome: true,
      cause: err,
    });
  }
  const code = errorCode(err);
  if (code !== undefined && NOT_SENT.has(code)) {
    return fail({
      code: DeliveryFailureCode.ConnectionRefused,
      detail: `could not connect to ${where} (${code}); nothing was sent`,
      retryable: true,
      unknownOutcome: false,
      cause: err,
    });
  }
  if (isAbort(err)) {
    return fail({
      code: DeliveryFailureCode.Aborted,
      detail: `the send to ${where} was aborted; the request may have arrived`,
      retryable: false,
      unknownOutcome: true,
      cause: err,
    });
  }
  return fail({
    code: DeliveryFailureCode.ConnectionReset,
    detail: `the connection to ${where} broke (${code ?? describe(err)}); the request may have arrived`,
    retryable: false,
    unknownOutcome: true,
    cause: err,
  });
}

/** The system or undici error code of a fetch failure (`TypeError: fetch failed` wraps it in `cause`). */
function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const nested = (e as { errors?: unknown }).errors;
    if (Array.isArray(nested)) {
      const inner = nested.map(errorCode).find((c) => c !== undefined);
      if (inner) return inner;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError');
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}`;
}

/** A 2xx answer: the external ref from the header, else from a JSON body's `id`. */
async function receipt(response: Response, refHeader: string): Promise<DeliveryReceipt> {
  const header = response.headers.get(refHeader);
  if (header) {
    // Only releases the connection: the answer is already read.
    await response.body?.cancel().catch(() => undefined);
    return { externalRef: header };
  }
  // The 2xx status already says the receiver accepted it: a body that is unreadable or not JSON does
  // not undo that, it only means there is no external ref.
  const text = await response.text().catch(() => '');
  try {
    const id = (JSON.parse(text) as { id?: unknown } | null)?.id;
    if ((typeof id === 'string' && id.length > 0) || typeof id === 'number') return { externalRef: String(id) };
  } catch {
    // not JSON: no external ref
  }
  return {};
}

/** `Retry-After` as ms: delta-seconds or an HTTP date. */
function retryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}
