import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { reply, type ScriptedReply } from './replies.js';

/** A request the test server received. */
export interface RecordedRequest {
  readonly method: string;
  /** e.g. `/v1/chat/completions`. */
  readonly path: string;
  /** Lower-cased names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The parsed JSON body (`undefined` when it was not JSON). */
  readonly body: unknown;
  readonly rawBody: string;
}

/** A fixed reply, or one computed from the request. */
export type ReplyScript = ScriptedReply | ((request: RecordedRequest) => ScriptedReply);

export interface OpenAITestServer {
  /** `http://127.0.0.1:<port>/v1`: the `baseUrl` for `createOpenAIProvider`. */
  readonly baseUrl: string;
  /** Every request received, in order. */
  readonly requests: readonly RecordedRequest[];
  /** Queues replies for the next requests, one each, in order. */
  enqueue(...replies: ReplyScript[]): void;
  /** The reply once the queue is empty. Default: streams `[server] <last user message>`. */
  setFallback(reply: ReplyScript): void;
  /** Stops listening and destroys open connections (hanging replies included). */
  close(): Promise<void>;
}

/**
 * Starts a scriptable OpenAI Chat Completions server on `127.0.0.1` (a free port) for tests: text streams,
 * tool calls split across deltas, malformed chunks, mid-stream disconnects, error statuses, 429 with
 * `Retry-After`, hangs. It records what it received.
 *
 * @example
 * ```ts
 * const server = await startOpenAITestServer();
 * server.enqueue(reply.status(500), reply.text('Hello'));
 * const provider = createOpenAIProvider({ baseUrl: server.baseUrl, model: 'm', retryBaseMs: 1 });
 * // ... server.requests.length === 2
 * await server.close();
 * ```
 */
export async function startOpenAITestServer(
  options: { replies?: readonly ReplyScript[]; fallback?: ReplyScript } = {},
): Promise<OpenAITestServer> {
  const queue: ReplyScript[] = [...(options.replies ?? [])];
  let fallback: ReplyScript = options.fallback ?? echo;
  const requests: RecordedRequest[] = [];

  const server = createServer((req, res) => {
    void handle(req, res).catch(() => res.destroy());
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const recorded = await record(req);
    requests.push(recorded);
    const script = queue.shift() ?? fallback;
    await respond(typeof script === 'function' ? script(recorded) : script, res);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    setFallback: (next) => {
      fallback = next;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

async function record(req: IncomingMessage): Promise<RecordedRequest> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  const rawBody = Buffer.concat(parts).toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(rawBody);
  } catch {
    body = undefined;
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return { method: req.method ?? '', path: req.url ?? '', headers, body, rawBody };
}

async function respond(script: ScriptedReply, res: ServerResponse): Promise<void> {
  switch (script.kind) {
    case 'hang':
      return;
    case 'status':
      res.writeHead(script.status, script.headers);
      res.end(script.body);
      return;
    case 'stream': {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      for (const event of script.events) {
        if (script.delayMs !== undefined) await pause(script.delayMs);
        await write(res, `data: ${event}\n\n`);
      }
      switch (script.end) {
        case 'done':
          res.end('data: [DONE]\n\n');
          return;
        case 'close':
          res.end();
          return;
        case 'destroy':
          res.socket?.destroy();
          return;
        case 'hang':
          return;
      }
    }
  }
}

function write(res: ServerResponse, text: string): Promise<void> {
  return new Promise((resolve, reject) => res.write(text, (error) => (error ? reject(error) : resolve())));
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The default reply: `[server] <last user message>`. */
function echo(request: RecordedRequest): ScriptedReply {
  const messages = (request.body as { messages?: { role?: string; content?: unknown }[] } | undefined)?.messages ?? [];
  const last = [...messages].reverse().find((m) => m.role === 'user');
  return reply.text(`[server] ${typeof last?.content === 'string' ? last.content : ''}`);
}
