import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { demiurge, tempHome } from './cli.js';
import { attr, type OtlpReceiver, startOtlpReceiver } from './otlp-receiver.js';
import { seedRuntime } from './seed.js';
import { type ServeProcess, startServe, writeHostHome } from './serve-process.js';

let home: ReturnType<typeof tempHome>;
let host: ServeProcess | undefined;
let receiver: OtlpReceiver | undefined;
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

const otlpReceiver = async () => {
  receiver = await startOtlpReceiver();
  return receiver;
};

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
    // Nor is a trace id recorded in the log.
    const events = await demiurge(['events', '--json', '--home', home.path]);
    expect(events.stdout).toContain('"turn.started"');
    expect(events.stdout).not.toContain('traceId');
  }, 60_000);

  it('exports metrics alone with OTEL_TRACES_EXPORTER=none: an interrupted send waiting for an operator is counted', async () => {
    const otlp = await otlpReceiver();
    writeHostHome(home.path);
    // A store with a webhook send whose outcome is unknown (interrupted after the request went out).
    await seedRuntime(home.path);
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlp.url;
    process.env.OTEL_TRACES_EXPORTER = 'none';
    process.env.OTEL_METRIC_EXPORT_INTERVAL = '300';
    host = await startServe(home.path);
    const unknownSends = () =>
      otlp.metrics
        .filter((m) => m.name === 'demiurge.sends.unknown')
        .at(-1)
        ?.gauge?.dataPoints.map((p) => Number(p.asInt ?? p.asDouble));
    await expect.poll(unknownSends, { timeout: 20_000 }).toEqual([1]);
    expect(otlp.metrics.map((m) => m.name)).toContain('demiurge.queue.depth');
    await host.stop();
    host = undefined;
    // Traces off: no span was sent, and no trace id was recorded in the log.
    expect(otlp.spans).toEqual([]);
    expect((await demiurge(['events', '--json', '--home', home.path])).stdout).not.toContain('traceId');
  }, 60_000);
});
