import { createServer, type Server } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { demiurge, tempHome } from './cli.js';
import { type ServeProcess, startServe, writeHostHome } from './serve-process.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: { stringValue?: string } }[];
}

let home: ReturnType<typeof tempHome>;
let host: ServeProcess | undefined;
let receiver: Server | undefined;
const saved = { ...process.env };
beforeEach(() => {
  home = tempHome();
});
afterEach(async () => {
  await host?.stop('SIGKILL');
  host = undefined;
  receiver?.close();
  process.env = { ...saved };
  home.remove();
});

/** A real OTLP/HTTP receiver: collects the spans POSTed to /v1/traces (JSON). */
async function otlpReceiver(): Promise<{ url: string; spans: OtlpSpan[]; paths: string[] }> {
  const spans: OtlpSpan[] = [];
  const paths: string[] = [];
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      const doc = JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
      for (const r of doc.resourceSpans) for (const s of r.scopeSpans) spans.push(...s.spans);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, spans, paths };
}

const attr = (span: OtlpSpan, key: string) => span.attributes.find((a) => a.key === key)?.value.stringValue;

describe('OpenTelemetry export (serve with OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  it('sends a turn span with its tool call as a child to a real OTLP/HTTP receiver', async () => {
    const otlp = await otlpReceiver();
    const ws = writeHostHome(home.path, {
      script: [{ tool_calls: [{ name: 'list_files', arguments: { path: '.' } }] }, { content: 'listed' }],
    });
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlp.url;
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
    process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
    process.env.OTEL_SERVICE_NAME = 'demiurge-e2e';
    host = await startServe(home.path, ws);
    const run = await demiurge(['run', 'list the files', '--home', home.path]);
    expect(run.code, run.stderr).toBe(0);
    await expect.poll(() => otlp.spans.map((s) => s.name), { timeout: 15_000 }).toContain('demiurge.tool_call');
    await expect.poll(() => otlp.spans.map((s) => s.name), { timeout: 15_000 }).toContain('demiurge.turn');
    const turn = otlp.spans.find((s) => s.name === 'demiurge.turn')!;
    const tool = otlp.spans.find((s) => s.name === 'demiurge.tool_call')!;
    expect(tool.traceId).toBe(turn.traceId);
    expect(tool.parentSpanId).toBe(turn.spanId);
    expect(attr(tool, 'demiurge.tool')).toBe('list_files');
    expect(attr(turn, 'demiurge.turn_id')).toMatch(/^trn_/);
    expect(attr(turn, 'demiurge.session_id')).toMatch(/^ses_/);
    expect(otlp.paths[0]).toMatch(/^POST \/v1\/traces application\/json/);
  }, 60_000);

  it('is off without OTEL_* settings: nothing is sent', async () => {
    const otlp = await otlpReceiver();
    writeHostHome(home.path);
    host = await startServe(home.path);
    expect((await demiurge(['run', 'hello', '--home', home.path])).code).toBe(0);
    await host.stop();
    host = undefined;
    expect(otlp.paths).toEqual([]);
  }, 60_000);
});
