import { chmod, lstat } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { dirname, resolve } from 'node:path';
import { EventHub } from './event-hub.js';
import { type ConnectionIo, OperatorConnection } from './operator-connection.js';
import { UnsafeRuntimeDirError } from './operator-errors.js';
import { ensurePrivateDir, removeStaleSocket } from './runtime-dir.js';
import {
  connectionContext,
  DEFAULT_SHUTDOWN_REASON,
  defaultOnError,
  type OperatorServerOptions,
} from './server-options.js';

/** Options of {@link serveUnixSocket}. */
export interface UnixSocketServerOptions extends OperatorServerOptions {
  /** The socket file, e.g. `operatorSocketPath(home)`; its directory must be (or becomes) private. */
  readonly path: string;
  /** How long `close()` lets clients take their `operator.shutdown` before cutting them off (ms, default 1000). */
  readonly closeGraceMs?: number;
}

/** A listening socket gateway. */
export interface OperatorSocketServer {
  readonly path: string;
  /** Clients connected now (initialized or not). */
  readonly connections: number;
  /** Stops accepting, sends `operator.shutdown` to initialized clients, ends every connection, removes the socket. */
  close(reason?: string): Promise<void>;
}

/** Client disconnects that are not failures of the gateway. */
const ROUTINE_DISCONNECTS = new Set(['ECONNRESET', 'EPIPE']);

/**
 * The operator protocol on a unix socket (mode 0600, in a private directory; no TCP). Many clients at once;
 * backend events are broadcast to the initialized ones. A client disconnecting cancels nothing.
 *
 * @example
 * const server = await serveUnixSocket({ path: operatorSocketPath(home), backend });
 * process.once('SIGTERM', () => void server.close('host stopping'));
 */
export async function serveUnixSocket(options: UnixSocketServerOptions): Promise<OperatorSocketServer> {
  const path = resolve(options.path);
  await ensurePrivateDir(dirname(path));
  await removeStaleSocket(path);

  const onError = options.onError ?? defaultOnError;
  const sockets = new Map<Socket, OperatorConnection>();
  const server = createServer({ allowHalfOpen: true });
  await listen(server, path);
  try {
    await chmod(path, 0o600);
    if (!(await lstat(path)).isSocket()) throw new UnsafeRuntimeDirError(path, 'was replaced while binding');
  } catch (error) {
    await new Promise<void>((done) => server.close(() => done()));
    throw error;
  }

  const hub = new EventHub(options.backend.events$, onError);
  const ctx = connectionContext({ ...options, onError }, hub);
  server.on('connection', (socket) => {
    const io: ConnectionIo = {
      write: (text) => {
        socket.write(text);
      },
      get writableLength() {
        return socket.writableLength;
      },
      pause: () => socket.pause(),
      resume: () => socket.resume(),
      end: () => socket.end(),
      destroy: () => socket.destroy(),
    };
    const connection = new OperatorConnection(io, ctx);
    sockets.set(socket, connection);
    socket.on('data', (chunk: Buffer) => connection.push(chunk));
    socket.on('end', () => connection.endInput());
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (!ROUTINE_DISCONNECTS.has(error.code ?? '')) onError(error);
    });
    socket.on('close', () => {
      connection.close();
      sockets.delete(socket);
    });
    // The client half-closed: answer what it asked, then end our side.
    void connection.drained.then(() => {
      if (!socket.destroyed) socket.end();
    });
  });
  server.on('error', onError);

  let closing: Promise<void> | undefined;
  return {
    path,
    get connections() {
      return sockets.size;
    },
    close: (reason = DEFAULT_SHUTDOWN_REASON) => {
      closing ??= new Promise<void>((done) => {
        const cutoff = setTimeout(() => {
          for (const socket of sockets.keys()) socket.destroy();
        }, options.closeGraceMs ?? 1000);
        server.close(() => {
          clearTimeout(cutoff);
          done();
        });
        hub.close();
        for (const connection of sockets.values()) connection.shutdown(reason);
      });
      return closing;
    },
  };
}

function listen(server: Server, path: string): Promise<void> {
  return new Promise((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolveListen();
    });
  });
}
