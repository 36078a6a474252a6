/** The operator protocol version this package speaks; `operator.initialize` must ask for exactly this one. */
export const PROTOCOL_VERSION = 1;

/** The server name in the `operator.initialize` result and the `operator.ready` event. */
export const SERVER_NAME = 'demiurge';

/** The server version reported when the host does not pass one (this package's version). */
export const OPERATOR_PACKAGE_VERSION = '0.1.0';

/** The limits of a server's connections (see {@link OperatorLimits} for the defaults). */
export interface OperatorLimitSettings {
  readonly maxLineBytes: number;
  readonly maxInFlight: number;
  readonly maxPendingWriteBytes: number;
}

/**
 * Limits that keep a connection's memory bounded whatever a client sends or fails to read.
 * A line longer than `maxLineBytes` is discarded up to its newline without being buffered.
 */
export const OperatorLimits: OperatorLimitSettings = {
  /** Longest accepted request line, in bytes, without its newline (1 MiB). */
  maxLineBytes: 1024 * 1024,
  /** Requests of one connection that may await the backend at once; further lines wait (input is paused). */
  maxInFlight: 32,
  /** Bytes queued for a client that does not read; beyond this the client is disconnected (8 MiB). */
  maxPendingWriteBytes: 8 * 1024 * 1024,
};

/** A request id as the client chose it, echoed in the response. */
export type RequestId = string | number;

/** `{ id, method, params }`: one request line from a client. */
export interface RequestFrame {
  readonly id: RequestId;
  readonly method: string;
  readonly params?: unknown;
}

/** An error as a client receives it; `field` names the offending param for `invalid_params`. */
export interface WireError {
  readonly code: string;
  readonly message: string;
  readonly field?: string;
}

/** `{ id, result }` or `{ id, error }`: the answer to one request. */
export type ResponseFrame =
  | { readonly id: RequestId; readonly result: unknown }
  | { readonly id: RequestId; readonly error: WireError };

/** `{ event, payload }`: a server-pushed event. */
export interface EventFrame {
  readonly event: string;
  readonly payload: unknown;
}

/** Whether a value can be a request id: a string or a finite number. */
export function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

/** One frame as a line of NDJSON (with its newline). */
export function encodeFrame(frame: ResponseFrame | EventFrame | RequestFrame): string {
  return `${JSON.stringify(frame)}\n`;
}
