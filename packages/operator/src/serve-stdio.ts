import type { Readable, Writable } from 'node:stream';
import { EventHub } from './event-hub.js';
import { type ConnectionIo, OperatorConnection } from './operator-connection.js';
import {
  connectionContext,
  DEFAULT_SHUTDOWN_REASON,
  defaultOnError,
  type OperatorServerOptions,
} from './server-options.js';

/** Options of {@link serveStdio}: the streams of the one client (usually `process.stdin`/`process.stdout`). */
export interface StdioServerOptions extends OperatorServerOptions {
  readonly input: Readable;
  readonly output: Writable;
  /**
   * Called once the input ended and every request was answered; events keep flowing to the client until
   * it settles (the host waits here for the turns its client started and their deliveries).
   */
  readonly afterInput?: () => Promise<void>;
}

/** A running stdio gateway. */
export interface OperatorStdioServer {
  /** Resolves when the input ended, every request was answered and `afterInput` settled, or after {@link close}. */
  readonly closed: Promise<void>;
  /** Sends `operator.shutdown` (if initialized) and stops reading; the streams are left open. */
  close(reason?: string): Promise<void>;
}

/**
 * The operator protocol over a pair of streams, for `demiurge gateway --stdio`: one client, NDJSON in on
 * `input`, responses and events out on `output`. The caller owns the streams (they are never ended here).
 *
 * @example
 * const server = serveStdio({ input: process.stdin, output: process.stdout, backend });
 * await server.closed; // stdin ended
 */
export function serveStdio(options: StdioServerOptions): OperatorStdioServer {
  const { input, output } = options;
  const onError = options.onError ?? defaultOnError;
  const hub = new EventHub(options.backend.events$, onError);
  let finished = false;
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    markClosed = resolve;
  });
  const finish = (): void => {
    if (finished) return;
    finished = true;
    markClosed();
    input.off('data', onData);
    input.off('end', onEnd);
    input.off('error', onStreamError);
    output.off('error', onStreamError);
    input.pause();
    hub.close();
    connection.close();
  };
  const io: ConnectionIo = {
    write: (text) => {
      output.write(text);
    },
    get writableLength() {
      return output.writableLength;
    },
    pause: () => input.pause(),
    resume: () => input.resume(),
    end: finish,
    destroy: finish,
  };
  const connection = new OperatorConnection(io, connectionContext({ ...options, onError }, hub));
  const onData = (chunk: Buffer | string): void =>
    connection.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  const onEnd = (): void => connection.endInput();
  const onStreamError = (error: unknown): void => {
    onError(error);
    finish();
  };
  input.on('data', onData);
  input.on('end', onEnd);
  input.on('error', onStreamError);
  output.on('error', onStreamError);
  let closing = false;
  void connection.drained
    .then(async () => {
      if (!closing && !finished && options.afterInput) await options.afterInput();
    })
    .catch(onError)
    .then(finish);
  return {
    closed,
    close: async (reason = DEFAULT_SHUTDOWN_REASON) => {
      closing = true;
      connection.shutdown(reason);
      finish();
      await closed;
    },
  };
}
