import { connect, type Socket } from 'node:net';
import { type Observable, Subject } from 'rxjs';
import { LineSplitter } from './line-splitter.js';
import { OperatorConnectionClosedError, OperatorRequestError } from './operator-errors.js';
import type { OperatorEvent } from './operator-events.js';
import type { OperatorMethodName, OperatorMethods } from './operator-methods.js';
import { encodeFrame, type WireError } from './protocol.js';

/** A connection to a socket gateway. */
export interface OperatorClient {
  /**
   * Sends a request; resolves with its result, rejects with {@link OperatorRequestError} on an error answer.
   * A protocol method's params and result are typed; any other name is sent as is (the server answers
   * `unknown_method`).
   */
  request<M extends string>(method: M, ...params: ParamsArg<M>): Promise<ResultOf<M>>;
  /**
   * Events the server pushes (hot: subscribe before `operator.initialize` to see `operator.ready`).
   * Completes when the connection ends; errors if the server broke the protocol.
   */
  readonly events$: Observable<OperatorEvent>;
  /** Resolves when the connection has ended, whoever ended it. */
  readonly closed: Promise<void>;
  /** Ends the connection (pending requests reject with {@link OperatorConnectionClosedError}); cancels nothing. */
  close(): Promise<void>;
}

/** The params argument of a method: required unless every param is optional. */
export type ParamsArg<M extends string> = M extends OperatorMethodName
  ? object extends OperatorMethods[M]['params']
    ? [params?: OperatorMethods[M]['params']]
    : [params: OperatorMethods[M]['params']]
  : [params?: unknown];
/** The result type of a method. */
export type ResultOf<M extends string> = M extends OperatorMethodName ? OperatorMethods[M]['result'] : unknown;

/** Options of {@link connectOperator}. */
export interface ConnectOperatorOptions {
  /** Longest frame accepted from the server (default 64 MiB); a longer one ends the connection. */
  readonly maxLineBytes?: number;
}

interface Pending {
  readonly method: string;
  readonly resolve: (result: unknown) => void;
  readonly reject: (error: Error) => void;
}

/**
 * Connects to the operator gateway's unix socket. The caller performs the handshake.
 *
 * @example
 * const client = await connectOperator(operatorSocketPath(home));
 * client.events$.subscribe((e) => render(e));
 * await client.request('operator.initialize', { protocol_version: 1, client: { name: 'tui', version: '1.0.0' } });
 * const { session_id } = await client.request('operator.submit', { text: 'hello' });
 */
export async function connectOperator(path: string, options: ConnectOperatorOptions = {}): Promise<OperatorClient> {
  const socket = await open(path);
  const pending = new Map<number, Pending>();
  const events = new Subject<OperatorEvent>();
  let nextId = 1;
  let ended = false;
  let failure: Error | undefined;

  const fail = (error: Error): void => {
    failure ??= error;
    socket.destroy();
  };
  const onFrame = (text: string): void => {
    let frame: { id?: unknown; event?: unknown; payload?: unknown; result?: unknown; error?: WireError };
    try {
      frame = JSON.parse(text);
    } catch {
      fail(new Error('the operator gateway sent a line that is not JSON'));
      return;
    }
    if (typeof frame.event === 'string') {
      events.next(frame as OperatorEvent);
      return;
    }
    const request = typeof frame.id === 'number' ? pending.get(frame.id) : undefined;
    if (request === undefined) return; // an answer to a request this client no longer waits for
    pending.delete(frame.id as number);
    if (frame.error !== undefined) {
      const { code, message, field } = frame.error;
      request.reject(new OperatorRequestError(request.method, code, message, field));
    } else {
      request.resolve(frame.result);
    }
  };
  const splitter = new LineSplitter(options.maxLineBytes ?? 64 * 1024 * 1024, {
    line: onFrame,
    oversized: (limit) => fail(new Error(`the operator gateway sent a frame longer than ${limit} bytes`)),
  });
  socket.on('data', (chunk: Buffer) => splitter.push(chunk));
  socket.on('end', () => {
    splitter.end();
    socket.end();
  });
  socket.on('error', (error) => {
    failure ??= error;
  });
  const closed = new Promise<void>((resolveClosed) => {
    socket.on('close', () => {
      ended = true;
      for (const request of pending.values()) {
        request.reject(new OperatorConnectionClosedError(request.method, failure ? { cause: failure } : undefined));
      }
      pending.clear();
      if (failure !== undefined && !isRoutine(failure)) events.error(failure);
      else events.complete();
      resolveClosed();
    });
  });

  const request = (method: string, params?: unknown): Promise<unknown> => {
    if (ended || socket.writableEnded) return Promise.reject(new OperatorConnectionClosedError(method));
    const id = nextId++;
    return new Promise((resolveRequest, reject) => {
      pending.set(id, { method, resolve: resolveRequest, reject });
      socket.write(encodeFrame(params === undefined ? { id, method } : { id, method, params }));
    });
  };

  return {
    request: request as OperatorClient['request'],
    events$: events.asObservable(),
    closed,
    close: async () => {
      // Flush what was written, then go: nothing is waited for, and nothing is cancelled by leaving.
      socket.end(() => socket.destroy());
      await closed;
    },
  };
}

function isRoutine(error: Error): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ECONNRESET' || code === 'EPIPE';
}

function open(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ path, allowHalfOpen: true });
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}
