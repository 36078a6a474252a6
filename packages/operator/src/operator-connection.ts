import type { EventHub } from './event-hub.js';
import { LineSplitter } from './line-splitter.js';
import type { OperatorBackend, OperatorCaller } from './operator-backend.js';
import { invalidParams, OperatorErrorCode, OperatorProtocolError, toWireError } from './operator-errors.js';
import type { OperatorEventPayload } from './operator-events.js';
import { backendRoute, type InitializeResult } from './operator-methods.js';
import { InitializeParams } from './operator-params.js';
import {
  BUILD_STAMP,
  checkSessionHandshake,
  isSessionHandshake,
  type OperatorSession,
  sessionRoute,
} from './operator-session.js';
import {
  encodeFrame,
  isRequestId,
  type OperatorLimitSettings,
  PROTOCOL_VERSION,
  type RequestId,
  SERVER_NAME,
} from './protocol.js';

/** The byte pipe under one connection: a socket, or stdin/stdout. */
export interface ConnectionIo {
  write(text: string): void;
  /** Bytes written but not yet taken by the peer. */
  readonly writableLength: number;
  /** Stop reading input until {@link resume} (requests are waiting for the backend). */
  pause(): void;
  resume(): void;
  /** End the connection after what was written is flushed. */
  end(): void;
  /** End the connection now. */
  destroy(): void;
}

/** What every connection of a server shares. */
export interface ConnectionContext {
  readonly backend: OperatorBackend;
  readonly hub: EventHub;
  readonly version: string;
  readonly limits: OperatorLimitSettings;
  readonly onError: (error: unknown) => void;
}

type State = 'new' | 'initializing' | 'ready' | 'closed';
type Answer = { readonly result: unknown; readonly onAnswered?: () => void };

/**
 * The protocol for one client: NDJSON lines in, responses and events out. Requests wait for
 * `operator.initialize` to finish; at most `maxInFlight` await the backend at once (further lines wait and
 * input is paused). Closing never calls the backend: a run survives its client.
 */
export class OperatorConnection {
  private state: State = 'new';
  /** Who this client said it is (`operator.initialize`): passed with every backend call. */
  private caller: OperatorCaller | undefined;
  private readonly splitter: LineSplitter;
  private queue: string[] = [];
  private head = 0;
  private inFlight = 0;
  private paused = false;
  private inputEnded = false;
  private detach: (() => void) | undefined;
  /** Set when the client initialized with the original handshake: the session-bound dialect. */
  private session: OperatorSession | undefined;
  private markDrained!: () => void;
  /** Resolves once the input ended and every request was answered (or the connection closed). */
  readonly drained = new Promise<void>((resolve) => {
    this.markDrained = resolve;
  });

  constructor(
    private readonly io: ConnectionIo,
    private readonly ctx: ConnectionContext,
  ) {
    this.splitter = new LineSplitter(ctx.limits.maxLineBytes, {
      line: (text) => {
        if (text.trim() !== '') this.queue.push(text);
      },
      oversized: (limit) =>
        this.sendError(OperatorErrorCode.LineTooLong, `a line was longer than ${limit} bytes; it was discarded`),
    });
  }

  get initialized(): boolean {
    return this.state === 'ready';
  }

  push(chunk: Buffer): void {
    if (this.state === 'closed') return;
    this.splitter.push(chunk);
    this.pump();
  }

  endInput(): void {
    if (this.state === 'closed') return;
    this.splitter.end();
    this.inputEnded = true;
    this.pump();
  }

  /** The server is going away: an initialized client gets `operator.shutdown`, then the connection ends. */
  shutdown(reason: string): void {
    if (this.state === 'ready') this.write(encodeFrame({ event: 'operator.shutdown', payload: { reason } }));
    this.close();
    this.io.end();
  }

  /** The transport closed: stop sending; answers still pending are dropped, nothing is cancelled. */
  close(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.detach?.();
    this.session?.close();
    this.queue = [];
    this.head = 0;
    this.markDrained();
  }

  private pump(): void {
    while (
      this.head < this.queue.length &&
      this.state !== 'initializing' &&
      this.state !== 'closed' &&
      this.inFlight < this.ctx.limits.maxInFlight
    ) {
      const line = this.queue[this.head++]!;
      this.handle(line);
    }
    if (this.head >= this.queue.length) {
      this.queue = [];
      this.head = 0;
    }
    const waiting = this.head < this.queue.length;
    if (waiting !== this.paused && this.state !== 'closed') {
      this.paused = waiting;
      if (waiting) this.io.pause();
      else this.io.resume();
    }
    if (this.inputEnded && !waiting && this.inFlight === 0) this.markDrained();
  }

  private handle(line: string): void {
    let request: unknown;
    try {
      request = JSON.parse(line);
    } catch (error) {
      this.sendError(OperatorErrorCode.ParseError, `a line was not JSON: ${(error as Error).message}`);
      return;
    }
    if (!isPlainObject(request)) {
      this.sendError(OperatorErrorCode.InvalidRequest, 'a request is a JSON object { "id", "method", "params" }');
      return;
    }
    const { id, method } = request;
    if (!isRequestId(id)) {
      const which = typeof method === 'string' ? ` (method ${method.slice(0, 100)})` : '';
      this.sendError(OperatorErrorCode.InvalidRequest, `a request${which} has no "id" (a string or a number)`);
      return;
    }
    this.inFlight++;
    void this.run(id, request);
  }

  private async run(id: RequestId, request: Record<string, unknown>): Promise<void> {
    let line: string;
    let onAnswered: (() => void) | undefined;
    try {
      const answer = await this.answer(request);
      // Encoded inside the try: a result that is not JSON (a cycle, a BigInt) is answered as `internal`.
      line = encodeFrame({ id, result: answer.result ?? null });
      onAnswered = answer.onAnswered;
    } catch (error) {
      // Only `initialize` moves the state, and it undoes its own move when it fails: another request's
      // failure (a `status` sent before `initialize`, answered after it started) must not undo it.
      const wire = toWireError(error);
      if (wire.code === OperatorErrorCode.Internal) this.ctx.onError(error);
      line = encodeFrame({ id, error: wire });
    }
    this.write(line);
    onAnswered?.();
    this.inFlight--;
    this.pump();
  }

  private async answer(request: Record<string, unknown>): Promise<Answer> {
    const { method } = request;
    const params = request.params ?? {};
    if (typeof method !== 'string') {
      throw new OperatorProtocolError(OperatorErrorCode.InvalidRequest, 'a request\'s "method" must be a string');
    }
    if (method === 'operator.initialize') return this.initialize(params);
    if (this.state !== 'ready') {
      throw new OperatorProtocolError(
        OperatorErrorCode.ProtocolMismatch,
        `call operator.initialize (protocol_version ${PROTOCOL_VERSION}) before ${method.slice(0, 100)}`,
      );
    }
    if (this.session && isPlainObject(params)) {
      const answered = sessionRoute(this.session, method, params);
      if (answered !== undefined) return { result: await answered };
    }
    const route = backendRoute(method);
    if (route === undefined) {
      throw new OperatorProtocolError(OperatorErrorCode.UnknownMethod, `unknown method ${method.slice(0, 100)}`);
    }
    if (!isPlainObject(params)) {
      throw new OperatorProtocolError(OperatorErrorCode.InvalidParams, `params of ${method} must be a JSON object`);
    }
    const parsed = route.params.safeParse(params);
    if (!parsed.success) throw invalidParams(method, parsed.error);
    return { result: await route.call(this.ctx.backend, parsed.data as never, this.caller) };
  }

  private async initialize(params: unknown): Promise<Answer> {
    if (this.ctx.backend.openSession && isSessionHandshake(params)) return this.initializeSession(params);
    if (this.state !== 'new') {
      throw new OperatorProtocolError(OperatorErrorCode.InvalidRequest, 'this connection is already initialized');
    }
    if (!isPlainObject(params)) {
      throw new OperatorProtocolError(
        OperatorErrorCode.InvalidParams,
        'params of operator.initialize must be a JSON object',
      );
    }
    if (params.protocol_version !== undefined && params.protocol_version !== PROTOCOL_VERSION) {
      throw new OperatorProtocolError(
        OperatorErrorCode.ProtocolMismatch,
        `this server speaks operator protocol_version ${PROTOCOL_VERSION}; the client asked for ${String(JSON.stringify(params.protocol_version)).slice(0, 40)}`,
      );
    }
    const parsed = InitializeParams.safeParse(params);
    if (!parsed.success) throw invalidParams('operator.initialize', parsed.error);
    const sessionId = parsed.data.session_id;
    this.caller = { client: parsed.data.client };
    this.state = 'initializing';
    try {
      const session = sessionId === undefined ? undefined : await this.ctx.backend.status({ session_id: sessionId });
      const server = { name: SERVER_NAME, version: this.ctx.version };
      const result: InitializeResult = {
        protocol_version: PROTOCOL_VERSION,
        server,
        ...(session === undefined ? {} : { session }),
      };
      const ready: OperatorEventPayload<'operator.ready'> = {
        protocol_version: PROTOCOL_VERSION,
        server,
        ...(sessionId === undefined ? {} : { session_id: sessionId }),
      };
      return { result, onAnswered: () => this.becomeReady(ready) };
    } catch (error) {
      this.state = 'new';
      throw error;
    }
  }

  /** The original handshake: bind this connection to a session (a second initialize announces it again). */
  private async initializeSession(params: Record<string, unknown>): Promise<Answer> {
    let handshake: ReturnType<typeof checkSessionHandshake>;
    try {
      handshake = checkSessionHandshake(params);
    } catch (error) {
      this.ctx.backend.handshakeRefused?.((error as Error).message);
      throw error;
    }
    if (this.state === 'ready' && this.session) {
      const session = this.session;
      const snapshot = await session.initialize();
      return {
        result: { ...snapshot, protocol_version: PROTOCOL_VERSION, build_stamp: BUILD_STAMP },
        onAnswered: () => session.announce(),
      };
    }
    if (this.state !== 'new') {
      throw new OperatorProtocolError(OperatorErrorCode.InvalidRequest, 'this connection is already initialized');
    }
    this.state = 'initializing';
    try {
      const session = await this.ctx.backend.openSession!({
        ...(handshake.build_stamp === undefined ? {} : { buildStamp: handshake.build_stamp }),
        ...(handshake.session_id === undefined ? {} : { sessionId: handshake.session_id }),
        emit: (event, payload) => this.write(encodeFrame({ event, payload })),
      });
      this.session = session;
      const snapshot = await session.initialize();
      const result = { ...snapshot, protocol_version: PROTOCOL_VERSION, build_stamp: BUILD_STAMP };
      return {
        result,
        onAnswered: () => {
          if (this.state !== 'initializing') return;
          this.state = 'ready';
          session.announce();
        },
      };
    } catch (error) {
      this.state = 'new';
      this.session?.close();
      this.session = undefined;
      throw error;
    }
  }

  private becomeReady(ready: OperatorEventPayload<'operator.ready'>): void {
    if (this.state !== 'initializing') return;
    this.state = 'ready';
    this.write(encodeFrame({ event: 'operator.ready', payload: ready }));
    this.detach = this.ctx.hub.add((line) => this.write(line));
  }

  private sendError(code: string, message: string): void {
    this.write(encodeFrame({ event: 'operator.error', payload: { code, message } }));
  }

  private write(text: string): void {
    if (this.state === 'closed') return;
    this.io.write(text);
    if (this.io.writableLength > this.ctx.limits.maxPendingWriteBytes) {
      this.ctx.onError(
        new Error(
          `an operator client did not read ${this.io.writableLength} queued bytes (limit ${this.ctx.limits.maxPendingWriteBytes}); it was disconnected`,
        ),
      );
      this.close();
      this.io.destroy();
    }
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
