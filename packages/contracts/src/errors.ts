/**
 * Stable error codes. A boundary (CLI, gateway, tool result) converts a {@link DemiurgeError}
 * into a message for a person or `{ code, message }` for a client, once.
 */
export const ErrorCode = {
  StreamVersionConflict: 'stream_version_conflict',
  StreamTypeMismatch: 'stream_type_mismatch',
  EventValidation: 'event_validation',
  UnknownEventType: 'unknown_event_type',
  InvalidAppend: 'invalid_append',
  DatabaseNewerThanCode: 'database_newer_than_code',
  CorruptDatabase: 'corrupt_database',
  StoreBusy: 'store_busy',
  StoreClosed: 'store_closed',
  /** The store's database server cannot be reached or refused the credentials. */
  StoreUnavailable: 'store_unavailable',
  ProjectorFailed: 'projector_failed',
  UnknownProjector: 'unknown_projector',
  IllegalTransition: 'illegal_transition',
  StaleClaim: 'stale_claim',
  NotClaimable: 'not_claimable',
  NotFound: 'not_found',
  UnknownKind: 'unknown_kind',
  InvalidSpec: 'invalid_spec',
  NotResumable: 'not_resumable',
  /** The provider answered with an HTTP error status (after retries for 429/5xx). */
  ProviderHttp: 'provider_http',
  /** The provider's stream broke the protocol (a malformed chunk, bad JSON in tool arguments). */
  ProviderProtocol: 'provider_protocol',
  /** The provider did not answer within the timeout. */
  ProviderTimeout: 'provider_timeout',
  /** The connection ended before the stream finished. */
  ProviderDisconnected: 'provider_disconnected',
  /** The request was aborted by its caller (turn or run cancellation). */
  ProviderCancelled: 'provider_cancelled',
  /** A tool's input did not match its schema, or the tool raised. */
  ToolFailed: 'tool_failed',
  /** A path left the workspace root (`..`, an absolute path elsewhere, a symlink out). */
  WorkspaceEscape: 'workspace_escape',
  /** A policy (plan mode) refused an action. */
  PolicyDenied: 'policy_denied',
  /** The turn used its whole step budget. */
  BudgetExhausted: 'budget_exhausted',
  /** Another turn holds the session (busy mode `reject`). */
  SessionBusy: 'session_busy',
  /** The host (or one of its runtimes) is closing and admits nothing new. */
  Closing: 'closing',
  /** The principal does not own the run (or task) it tried to control, and has no right over it. */
  NotOwner: 'not_owner',
  /** A command outside its origin scope (e.g. acknowledging another session's task completion). */
  OutOfScope: 'out_of_scope',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Base of every typed Demiurge error: a literal `name`, a stable `code`, explicit fields, a `cause`. */
export abstract class DemiurgeError extends Error {
  abstract override readonly name: string;
  abstract readonly code: ErrorCode;
  /** The error as structured data, for a client. */
  toJSON(): { code: ErrorCode; message: string } {
    return { code: this.code, message: this.message };
  }
}

/** Event data (or meta) did not match its zod schema. `path` is the zod issue path. */
export class EventValidationError extends DemiurgeError {
  override readonly name = 'EventValidationError';
  readonly code = ErrorCode.EventValidation;
  constructor(
    readonly type: string,
    readonly path: readonly PropertyKey[],
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`invalid ${type} event at ${formatPath(path)}: ${detail}`, options);
  }
}

/** An event type that no registered schema describes. */
export class UnknownEventTypeError extends DemiurgeError {
  override readonly name = 'UnknownEventTypeError';
  readonly code = ErrorCode.UnknownEventType;
  constructor(readonly type: string) {
    super(`unknown event type "${type}": no schema is registered for it`);
  }
}

export function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  return path
    .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
    .join('.')
    .replace(/\.\[/g, '[');
}
