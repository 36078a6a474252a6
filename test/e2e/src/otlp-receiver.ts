import { createServer, type Server } from 'node:http';

/** One span as OTLP/HTTP JSON carries it. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
  events?: { name: string }[];
}

/** One metric as OTLP/HTTP JSON carries it (its data under `histogram`, `gauge` or `sum`). */
export interface OtlpMetric {
  name: string;
  histogram?: { dataPoints: { count: string | number; sum?: number }[] };
  gauge?: { dataPoints: { asInt?: string | number; asDouble?: number }[] };
  sum?: { dataPoints: { asInt?: string | number; asDouble?: number }[] };
}

/** A real OTLP/HTTP receiver (JSON): what was POSTed to /v1/traces and /v1/metrics. */
export interface OtlpReceiver {
  readonly url: string;
  readonly spans: OtlpSpan[];
  readonly metrics: OtlpMetric[];
  /** `METHOD path content-type` of each request. */
  readonly paths: string[];
  close(): void;
}

/** Starts an OTLP/HTTP receiver on a free loopback port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: OtlpSpan[] = [];
  const metrics: OtlpMetric[] = [];
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      const doc = JSON.parse(body) as {
        resourceSpans?: { scopeSpans: { spans: OtlpSpan[] }[] }[];
        resourceMetrics?: { scopeMetrics: { metrics: OtlpMetric[] }[] }[];
      };
      for (const r of doc.resourceSpans ?? []) for (const s of r.scopeSpans) spans.push(...s.spans);
      for (const r of doc.resourceMetrics ?? []) for (const s of r.scopeMetrics) metrics.push(...s.metrics);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, spans, metrics, paths, close: () => server.close() };
}

/** A span attribute's value (string or integer). */
export const attr = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue));
};
