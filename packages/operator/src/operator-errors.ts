import { DemiurgeError, formatPath } from '@demiurge/contracts';
import type { z } from 'zod';
import type { WireError } from './protocol.js';

/**
 * The protocol's own error codes. A backend's {@link DemiurgeError} keeps its own `code`
 * (`not_found`, `session_busy`...); anything else a backend throws is `internal`.
 */
export const OperatorErrorCode = {
  /** `operator.initialize` asked for another protocol version, or a method came before initialize. */
  ProtocolMismatch: 'protocol_mismatch',
  /** No such method. */
  UnknownMethod: 'unknown_method',
  /** The params did not match the method's schema; `field` names the first offending field. */
  InvalidParams: 'invalid_params',
  /** The line was JSON but not a request (`{ id, method, params }`), or initialize came twice. */
  InvalidRequest: 'invalid_request',
  /** The line was not JSON. */
  ParseError: 'parse_error',
  /** The line was longer than the limit; it was discarded up to its newline. */
  LineTooLong: 'line_too_long',
  /** The backend failed with something other than a DemiurgeError. */
  Internal: 'internal',
} as const;
export type OperatorErrorCode = (typeof OperatorErrorCode)[keyof typeof OperatorErrorCode];

/** A request the protocol layer refuses; converted once into `{ code, message, field? }` for the client. */
export class OperatorProtocolError extends Error {
  override readonly name = 'OperatorProtocolError';
  constructor(
    readonly code: OperatorErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** An `invalid_params` error naming the first zod issue's field (an unrecognized key names that key). */
export function invalidParams(method: string, error: z.ZodError): OperatorProtocolError {
  const issue = error.issues[0];
  if (!issue) return new OperatorProtocolError(OperatorErrorCode.InvalidParams, `invalid params for ${method}`);
  const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0] ?? ''] : issue.path;
  const field = path.length === 0 ? undefined : formatPath(path);
  const where = field === undefined ? 'params' : `params.${field}`;
  const message = `invalid params for ${method}: ${where}: ${issue.message}`;
  return field === undefined
    ? new OperatorProtocolError(OperatorErrorCode.InvalidParams, message)
    : new OperatorProtocolError(OperatorErrorCode.InvalidParams, message, field);
}

/**
 * The one conversion of a thrown value into a client error: protocol errors and {@link DemiurgeError}s keep
 * their code and message, anything else becomes `internal` with its message (never a stack).
 */
export function toWireError(error: unknown): WireError {
  if (error instanceof OperatorProtocolError) {
    return error.field === undefined
      ? { code: error.code, message: error.message }
      : { code: error.code, message: error.message, field: error.field };
  }
  if (error instanceof DemiurgeError) return { code: error.code, message: error.message };
  const message = error instanceof Error ? error.message : String(error);
  return { code: OperatorErrorCode.Internal, message: message || 'internal error' };
}

/** The server answered a request with an error; `code` is the server's (a protocol or DemiurgeError code). */
export class OperatorRequestError extends Error {
  override readonly name = 'OperatorRequestError';
  readonly field: string | undefined;
  constructor(
    readonly method: string,
    readonly code: string,
    message: string,
    field?: string,
  ) {
    super(message);
    this.field = field;
  }
}

/** The connection to the gateway ended before the request was answered. */
export class OperatorConnectionClosedError extends Error {
  override readonly name = 'OperatorConnectionClosedError';
  readonly code = 'connection_closed';
  constructor(
    readonly method: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(
      method === undefined
        ? 'the operator connection is closed'
        : `the operator connection closed before ${method} was answered`,
      options,
    );
  }
}

/** The socket's directory (or the socket path) is not private to this user; nothing was created. */
export class UnsafeRuntimeDirError extends Error {
  override readonly name = 'UnsafeRuntimeDirError';
  readonly code = 'unsafe_runtime_dir';
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`refusing to serve the operator socket: ${path} ${reason}`);
  }
}

/** Another gateway already listens on the socket path. */
export class GatewayAlreadyRunningError extends Error {
  override readonly name = 'GatewayAlreadyRunningError';
  readonly code = 'gateway_running';
  constructor(readonly path: string) {
    super(`another operator gateway is listening on ${path}; stop it first`);
  }
}
