import { z } from 'zod';
import { OperatorErrorCode, OperatorProtocolError } from './operator-errors.js';
import { PROTOCOL_VERSION } from './protocol.js';

/**
 * The session-bound dialect of the operator protocol: the original Demiurge gateway's (the one the Demiurge
 * terminal UI speaks). A client that initializes without `client` (the original handshake,
 * `{ protocol_version: 1, build_stamp }`) gets a connection bound to one session: `submit {text}` continues
 * it, `command {text}` runs slash commands, `interrupt {reason}` stops its turn, and the events it receives
 * are the original's full snapshots (`operator.ready`/`operator.status`), `operator.deliver` with
 * `deliveries[]`, and so on. Requests of this dialect are answered with results, never errors (the
 * original client treats an error reply as fatal); the extension methods (`status`, `history`, `cancel`)
 * stay reachable with their own params.
 */

/** The build stamp of the original protocol; `initialize` echoes it. */
export const BUILD_STAMP = 'demiurge-operator-v1';

/** The original `operator.initialize` params; `session_id` (attach to this session) is this project's extension. */
export const SessionInitializeParams = z.strictObject({
  protocol_version: z.number().int(),
  build_stamp: z.string().optional(),
  session_id: z.string().min(1).optional(),
});
export type SessionInitializeParams = z.output<typeof SessionInitializeParams>;

/** An approval decision of the original protocol, normalised. */
export type SessionApprovalDecision = 'once' | 'session' | 'deny';

/**
 * The original decisions: `1`/`y`/`yes`/`allow`/`once` allow this call, `2`/`a`/`always`/`session` allow
 * for the session, `3`/`n`/`no`/`deny` deny; anything else denies.
 */
export function parseApprovalDecision(value: unknown): SessionApprovalDecision {
  const text = typeof value === 'string' ? value.trim().toLowerCase() : String(value ?? '');
  if (['1', 'y', 'yes', 'allow', 'once', 'grant'].includes(text)) return 'once';
  if (['2', 'a', 'always', 'session'].includes(text)) return 'session';
  return 'deny';
}

/** What the host sees of a session-bound connection's handshake. */
export interface SessionOpen {
  readonly buildStamp?: string;
  readonly sessionId?: string;
  /** Pushes one event to this connection only (ignored once it closed). */
  readonly emit: (event: string, payload: Record<string, unknown>) => void;
}

/**
 * The host side of one session-bound connection. Every method answers (the results are the original's);
 * a failure is a result such as `{ accepted: false, reason }` plus a notice, never a thrown error.
 */
export interface OperatorSession {
  /** The `initialize` result: the status snapshot (the connection adds `protocol_version`, `build_stamp`). */
  initialize(): Promise<Record<string, unknown>>;
  /** After the initialize answer: `operator.ready`, `operator.history` (a resumed session), `operator.status`. */
  announce(): void;
  submit(p: { text: string; session_id?: string; plan?: boolean }): Promise<unknown>;
  replyPrompt(p: { prompt_id: string; answer: string }): Promise<unknown>;
  replyApproval(p: { approval_id: string; decision: SessionApprovalDecision; raw: string }): Promise<unknown>;
  command(p: { text: string }): Promise<unknown>;
  interrupt(p: { reason: string }): Promise<unknown>;
  shutdown(): Promise<unknown>;
  /** The connection closed: stop pushing (nothing is cancelled). */
  close(): void;
}

/** Whether `operator.initialize` params are the original handshake (no `client`). */
export function isSessionHandshake(params: unknown): params is Record<string, unknown> {
  return typeof params === 'object' && params !== null && !Array.isArray(params) && !Object.hasOwn(params, 'client');
}

/** Validates the original handshake: protocol version 1 and, when given, the original build stamp. */
export function checkSessionHandshake(params: Record<string, unknown>): SessionInitializeParams {
  const parsed = SessionInitializeParams.safeParse(params);
  const version = params.protocol_version;
  if (version !== PROTOCOL_VERSION) {
    throw new OperatorProtocolError(
      OperatorErrorCode.ProtocolMismatch,
      `TUI protocol mismatch: expected ${PROTOCOL_VERSION}, got ${String(JSON.stringify(version)).slice(0, 40)}`,
    );
  }
  if (params.build_stamp !== undefined && params.build_stamp !== BUILD_STAMP) {
    throw new OperatorProtocolError(
      OperatorErrorCode.ProtocolMismatch,
      `TUI build mismatch: expected ${BUILD_STAMP}, got ${String(JSON.stringify(params.build_stamp)).slice(0, 60)}`,
    );
  }
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = issue?.code === 'unrecognized_keys' ? issue.keys[0] : issue?.path.join('.');
    throw new OperatorProtocolError(
      OperatorErrorCode.InvalidParams,
      `invalid params for operator.initialize: params.${key ?? ''}: ${issue?.message ?? 'invalid'}`,
      key,
    );
  }
  return parsed.data;
}

/**
 * A param read as text the original's way: a string as is, a number or boolean written out, anything else
 * (absent, null, an object, an array) empty. An object is never `[object Object]` (a fuzzed `submit
 * {"text":{}}` used to start a turn with that text).
 */
const text = (value: unknown): string =>
  typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';

/**
 * Routes one request of a session-bound connection, as the original gateway reads its params (missing or
 * odd fields become empty strings). Returns undefined for a method this dialect does not own, or for a
 * request using an extension's params (those go to the backend's methods).
 */
export function sessionRoute(
  session: OperatorSession,
  method: string,
  params: Record<string, unknown>,
): Promise<unknown> | undefined {
  switch (method) {
    case 'operator.submit':
      return session.submit({
        text: text(params.text),
        ...(typeof params.session_id === 'string' ? { session_id: params.session_id } : {}),
        ...(typeof params.plan === 'boolean' ? { plan: params.plan } : {}),
      });
    case 'operator.reply_prompt':
      return session.replyPrompt({ prompt_id: text(params.prompt_id), answer: text(params.answer ?? params.text) });
    case 'operator.reply_approval':
      return session.replyApproval({
        approval_id: text(params.approval_id),
        decision: parseApprovalDecision(params.decision),
        raw: text(params.decision),
      });
    case 'operator.command':
      return session.command({ text: text(params.text) });
    case 'operator.interrupt':
      // `{ session_id }` is the extension's interrupt of any session: the backend's method.
      if (params.session_id !== undefined) return undefined;
      return session.interrupt({ reason: text(params.reason) || 'operator.interrupt' });
    case 'operator.shutdown':
      return session.shutdown();
    default:
      return undefined;
  }
}
