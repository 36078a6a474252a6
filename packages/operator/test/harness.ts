import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  connectOperator,
  type OperatorClient,
  type OperatorEvent,
  operatorSocketPath,
  serveUnixSocket,
  type UnixSocketServerOptions,
} from '../src/index.js';
import { fakeBackend } from './fake-backend.js';

export const CLIENT_INFO = { name: 'test-client', version: '0.0.1' } as const;
export const INIT = { protocol_version: 1, client: CLIENT_INFO } as const;

/** A private temp home with a socket server on `<home>/runtime/operator.sock` and a fake backend. */
export async function startGateway(
  options: Partial<UnixSocketServerOptions> & { overrides?: Parameters<typeof fakeBackend>[0] } = {},
) {
  const home = mkdtempSync(join(tmpdir(), 'dmo-'));
  const fake = fakeBackend(options.overrides);
  const errors: unknown[] = [];
  const server = await serveUnixSocket({
    path: operatorSocketPath(home),
    backend: fake.backend,
    onError: (error) => errors.push(error),
    ...options,
  });
  const clients: Array<{ close(): unknown }> = [];
  return {
    home,
    server,
    ...fake,
    errors,
    /** A protocol client (events recorded from the start). */
    async client(): Promise<OperatorClient & { received: OperatorEvent[] }> {
      const client = await connectOperator(server.path);
      const received: OperatorEvent[] = [];
      client.events$.subscribe({ next: (e) => received.push(e), error: () => {} });
      clients.push(client);
      return Object.assign(client, { received });
    },
    /** A raw socket client, for lines the protocol client would never send. */
    async raw(): Promise<RawClient> {
      const raw = await rawConnect(server.path);
      clients.push({ close: () => raw.socket.destroy() });
      return raw;
    },
    async dispose(): Promise<void> {
      for (const c of clients) await c.close();
      await server.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}
export type Gateway = Awaited<ReturnType<typeof startGateway>>;

type Frame = Record<string, unknown>;

export interface RawClient {
  readonly socket: Socket;
  readonly frames: Frame[];
  send(line: string): void;
  /** The first frame not taken yet that matches, waiting up to 5 s for it. */
  take(match: (frame: Frame) => boolean): Promise<Frame>;
}

export function rawConnect(path: string): Promise<RawClient> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    const frames: Frame[] = [];
    let wake: (() => void) | undefined;
    let rest = '';
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => {
      rest += text;
      for (let i = rest.indexOf('\n'); i !== -1; i = rest.indexOf('\n')) {
        frames.push(JSON.parse(rest.slice(0, i)) as Frame);
        rest = rest.slice(i + 1);
      }
      wake?.();
    });
    socket.once('error', reject);
    socket.once('connect', () =>
      resolve({
        socket,
        frames,
        send: (line) => socket.write(line.endsWith('\n') ? line : `${line}\n`),
        take: async (match) => {
          const deadline = Date.now() + 5000;
          for (;;) {
            const index = frames.findIndex(match);
            if (index !== -1) return frames.splice(index, 1)[0]!;
            if (Date.now() > deadline) throw new Error(`no matching frame; got ${JSON.stringify(frames)}`);
            await new Promise<void>((r) => {
              wake = r;
              setTimeout(r, 50);
            });
          }
        },
      }),
    );
  });
}

export const isResponse = (id: unknown) => (frame: Frame) => frame.id === id;
export const isEvent = (name: string) => (frame: Frame) => frame.event === name;

/** Waits until `check` holds (polling), failing after `ms`. */
export async function eventually(check: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
