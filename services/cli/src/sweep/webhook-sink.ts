import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST the sink received. */
export interface SinkHit {
  readonly idempotencyKey: string;
  readonly deliveryId: string | undefined;
  readonly at: number;
}

/** A counting webhook receiver on 127.0.0.1: every POST counted per `Idempotency-Key`, answered 200 after 0–50 ms. */
export interface WebhookSink {
  readonly url: string;
  /** How many POSTs arrived per `Idempotency-Key`. */
  readonly counts: ReadonlyMap<string, number>;
  readonly hits: readonly SinkHit[];
  /** Keys received more than once, with their counts. */
  duplicates(): [string, number][];
  close(): Promise<void>;
}

export async function startWebhookSink(delayMs: () => number): Promise<WebhookSink> {
  const counts = new Map<string, number>();
  const hits: SinkHit[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      if (req.method === 'POST') {
        const key = String(req.headers['idempotency-key'] ?? '(none)');
        counts.set(key, (counts.get(key) ?? 0) + 1);
        let deliveryId: string | undefined;
        try {
          deliveryId = (JSON.parse(body) as { delivery_id?: string }).delivery_id;
        } catch {
          deliveryId = undefined;
        }
        hits.push({ idempotencyKey: key, deliveryId, at: Date.now() });
      }
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: `sink-${hits.length}` }));
      }, delayMs());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    counts,
    hits,
    duplicates: () => [...counts].filter(([, n]) => n > 1),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
