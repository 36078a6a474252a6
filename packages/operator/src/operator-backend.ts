import type { Observable } from 'rxjs';
import type { OperatorEvent } from './operator-events.js';
import type {
  CancelParams,
  CompactParams,
  HistoryParams,
  InterruptParams,
  ReplyApprovalParams,
  ReplyPromptParams,
  ShutdownParams,
  StatusParams,
  SubmitParams,
} from './operator-params.js';
import type { CompactResult, HistoryResult, StatusResult } from './operator-results.js';
import type { OperatorSession, SessionOpen } from './operator-session.js';

/** What a successful `operator.submit` returns: where the input went. */
export interface SubmitResult {
  readonly session_id: string;
  readonly run_id: string;
  readonly turn_id: string;
}

/**
 * Who sent a request: the client as its `operator.initialize` named itself. The host records it as the
 * actor of what the request changes (`{ kind: 'operator', id: client.name }`) and checks ownership with it.
 */
export interface OperatorCaller {
  readonly client: { readonly name: string; readonly version: string };
}

/** The answer of a command that only acknowledges. */
export interface Ack {
  readonly ok: true;
}

/**
 * The host side of the gateway: the protocol layer validates params and calls exactly one of these per
 * request. A thrown {@link DemiurgeError} reaches the client with its `code`; anything else as `internal`.
 * Nothing here is called when a client disconnects (a run survives its client; only `cancel` cancels).
 *
 * @example
 * const backend: OperatorBackend = {
 *   submit: async ({ session_id, text }) => host.submit(session_id, text),
 *   // ...
 *   events$: host.operatorEvents$,
 * };
 */
export interface OperatorBackend {
  submit(p: SubmitParams, caller?: OperatorCaller): Promise<SubmitResult>;
  replyPrompt(p: ReplyPromptParams, caller?: OperatorCaller): Promise<Ack>;
  replyApproval(p: ReplyApprovalParams, caller?: OperatorCaller): Promise<Ack>;
  interrupt(p: InterruptParams, caller?: OperatorCaller): Promise<Ack>;
  cancel(p: CancelParams, caller?: OperatorCaller): Promise<Ack>;
  status(p: StatusParams, caller?: OperatorCaller): Promise<StatusResult>;
  history(p: HistoryParams, caller?: OperatorCaller): Promise<HistoryResult>;
  shutdown(p: ShutdownParams, caller?: OperatorCaller): Promise<Ack>;
  /** Compacts a session's model context now; a backend without it answers `unknown_method`. */
  compact?(p: CompactParams, caller?: OperatorCaller): Promise<CompactResult>;
  /**
   * Binds a connection that initialized with the original handshake (no `client`) to one session: the
   * session-bound dialect (see `operator-session.ts`). Without it, such a handshake is refused as before.
   */
  openSession?(open: SessionOpen): Promise<OperatorSession>;
  /** The original handshake was refused (protocol or build mismatch); its error reply follows. */
  handshakeRefused?(reason: string): void;
  /** Operator events to push to initialized clients; subscribed once per server. */
  readonly events$: Observable<OperatorEvent>;
}
