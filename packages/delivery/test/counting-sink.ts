import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the sink answers one request. */
export type SinkMode =
  | { readonly status: number; readonly headers?: Record<string, string>; readonly body?: string }
  | 'hang'
  | 'reset';

export interface SinkRequest {
  readonly key: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: unknown;
}

/**
 * A webhook receiver on 127.0.0.1:0 that counts requests per `Idempotency-Key` (once the whole body
 * arrived) and answers as scripted: a queue of modes, then the default mode.
 */
export interface CountingSink {
  readonly url: string;
  readonly requests: readonly SinkRequest[];
  count(key: string): number;
  script(...modes: SinkMode[]): void;
  setDefault(mode: SinkMode): void;
  /** Resolves once `n` requests in all were received. */
  received(n: number): Promise<void>;
  close(): Promise<void>;
}

export const ok = (body?: unknown, headers?: Record<string, string>): SinkMode => ({
  status: 200,
  ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  ...(headers ? { headers } : {}),
});
export const status = (code: number, headers?: Record<string, string>): SinkMode => ({
  status: code,
  body: `status ${code}`,
  ...(headers ? { headers } : {}),
});

export async function startCountingSink(defaultMode: SinkMode = ok()): Promise<CountingSink> {
  const requests: SinkRequest[] = [];
  const queue: SinkMode[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  let fallback = defaultMode;
  const answer = (mode: SinkMode, req: IncomingMessage, res: ServerResponse) => {
    if (mode === 'hang') return;
    if (mode === 'reset') {
      req.socket.resetAndDestroy();
      return;
    }
    res.writeHead(mode.status, { 'content-type': 'application/json', ...mode.headers });
    res.end(mode.body ?? '');
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const key = String(req.headers['idempotency-key'] ?? '');
      requests.push({ key, headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      for (const w of waiters.filter((w) => requests.length >= w.n)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      answer(queue.shift() ?? fallback, req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    count: (key) => requests.filter((r) => r.key === key).length,
    script: (...modes) => queue.push(...modes),
    setDefault: (mode) => {
      fallback = mode;
    },
    received: (n) =>
      requests.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve })),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/** A URL on which nothing listens (a port that was just released). */
export async function refusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/hook`;
}
