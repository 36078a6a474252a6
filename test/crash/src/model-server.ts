import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One chat message of a request the model server received (OpenAI Chat Completions shape). */
export interface ServedMessage {
  readonly role: string;
  readonly content: string | null;
}

/** A request the server received: its messages, and whether it asked for a compaction summary. */
export interface ServedRequest {
  readonly messages: readonly ServedMessage[];
  readonly compaction: boolean;
  /** The whole request body as received. */
  readonly raw: string;
}

/** What the server does with the next requests: answer, or hang (never answer; the host is killed meanwhile). */
export interface ModelServerModes {
  hangCompaction: boolean;
  hangTurns: boolean;
  /** Answers of the next turn requests, in order (then `ok <n>`): a text, or one tool call. */
  script: ({ text: string } | { tool: string; arguments: Record<string, unknown> })[];
}

export interface ModelServer {
  readonly baseUrl: string;
  readonly requests: ServedRequest[];
  readonly modes: ModelServerModes;
  close(): Promise<void>;
}

/** The compaction instructions start with this (`COMPACTION_INSTRUCTIONS` of the turn engine). */
const COMPACTION_MARK = 'You compact a conversation';

/**
 * A minimal OpenAI-compatible streaming model on 127.0.0.1 for host crash tests: a turn request is answered
 * `ok <n>` (n: the request's number), a compaction request `summary of <lines> lines`; either can be made to hang.
 */
export async function startModelServer(): Promise<ModelServer> {
  const requests: ServedRequest[] = [];
  const modes: ModelServerModes = { hangCompaction: false, hangTurns: false, script: [] };
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => {
      const raw = Buffer.concat(parts).toString('utf8');
      const body = JSON.parse(raw) as { messages: ServedMessage[] };
      const compaction = body.messages[0]?.content?.startsWith(COMPACTION_MARK) === true;
      requests.push({ messages: body.messages, compaction, raw });
      if (compaction ? modes.hangCompaction : modes.hangTurns) return; // never answered
      const next = compaction ? undefined : modes.script.shift();
      if (next && 'tool' in next) return streamCall(res, requests.length, next.tool, next.arguments);
      const text = compaction
        ? `summary of ${(body.messages.at(-1)?.content ?? '').split('\n').length} lines`
        : (next?.text ?? `ok ${requests.length}`);
      stream(res, text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    modes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const chunk = (delta: Record<string, unknown>, finish: string | null) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'test-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

function streamCall(res: ServerResponse, n: number, name: string, args: Record<string, unknown>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const call = { index: 0, id: `call_${n}`, type: 'function', function: { name, arguments: JSON.stringify(args) } };
  res.write(chunk({ role: 'assistant', tool_calls: [call] }, null));
  res.write(chunk({}, 'tool_calls'));
  res.end('data: [DONE]\n\n');
}

function stream(res: ServerResponse, text: string): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(chunk({ role: 'assistant', content: text }, null));
  res.write(chunk({}, 'stop'));
  res.end('data: [DONE]\n\n');
}
