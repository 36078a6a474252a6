import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type OpenAITestServer, reply, startOpenAITestServer } from '@demiurge/providers/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { demiurge, tempHome } from './cli.js';
import { type DashboardHost, startDashboard } from './dashboard-host.js';
import { attr, type OtlpReceiver, type OtlpSpan, startOtlpReceiver } from './otlp-receiver.js';

let home: ReturnType<typeof tempHome>;
let host: DashboardHost | undefined;
let otlp: OtlpReceiver | undefined;
let model: OpenAITestServer | undefined;
const saved = { ...process.env };
beforeEach(() => {
  home = tempHome();
});
afterEach(async () => {
  await host?.stop('SIGKILL');
  host = undefined;
  otlp?.close();
  await model?.close();
  process.env = { ...saved };
  home.remove();
});

describe('OpenTelemetry: model requests, detached work, trace ids in the log, metrics', () => {
  it('exports the whole trace of a turn that starts a background command, and its metrics', async () => {
    otlp = await startOtlpReceiver();
    // A real OpenAI-compatible server: the first request fails with 503 (the provider retries it), then the model
    // asks for a background command, then it answers.
    model = await startOpenAITestServer();
    model.enqueue(
      reply.status(503),
      reply.toolCalls([{ name: 'shell', arguments: { command: 'echo traced', background: true } }], {
        usage: { inputTokens: 21, outputTokens: 4 },
      }),
      reply.text('started it'),
    );
    const ws = join(home.path, 'ws');
    mkdirSync(ws, { recursive: true });
    const config = ['provider:', '  name: openai', `  base_url: ${model.baseUrl}`, '  model: traced-model'];
    config.push('  max_retries: 2', `workspace: ${ws}`, 'scheduler:', '  enabled: false', 'delivery:', '  poll_ms: 50');
    writeFileSync(join(home.path, 'config.yaml'), `${config.join('\n')}\n`);
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlp.url;
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
    process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
    process.env.OTEL_METRIC_EXPORT_INTERVAL = '300';
    host = await startDashboard(home.path, ws);
    const run = await demiurge(['run', 'start the command', '--home', home.path]);
    expect(run.code, run.stderr).toBe(0);

    const names = () => otlp!.spans.map((s) => s.name);
    for (const name of ['demiurge.turn', 'demiurge.task', 'demiurge.work', 'demiurge.delivery']) {
      await expect.poll(names, { timeout: 20_000 }).toContain(name);
    }
    const turnId = (s: OtlpSpan) => attr(s, 'demiurge.turn_id');
    const turn = otlp.spans.find((s) => s.name === 'demiurge.turn' && s.parentSpanId === undefined)!;
    const children = (name: string) =>
      otlp!.spans.filter((s) => s.name === name && s.traceId === turn.traceId && s.parentSpanId === turn.spanId);
    // Each model request of the turn, with its model, token counts and the retry the provider made.
    const requests = children('demiurge.model_request').filter((s) => turnId(s) === turnId(turn));
    expect(requests.length).toBe(2);
    const first = requests.find((s) => attr(s, 'demiurge.step_id') === 's1')!;
    expect(attr(first, 'gen_ai.request.model')).toBe('traced-model');
    expect(attr(first, 'gen_ai.usage.input_tokens')).toBe(21);
    expect(attr(first, 'gen_ai.usage.output_tokens')).toBe(4);
    expect(attr(first, 'demiurge.retries')).toBe(1);
    expect(first.events?.map((e) => e.name)).toEqual(['retry']);
    // The tool call, and the detached work it caused, after the turn ended: the task, the reply's work claim
    // and its delivery are all children of the turn's span, in the turn's trace.
    expect(children('demiurge.tool_call').map((s) => attr(s, 'demiurge.tool'))).toEqual(['shell']);
    const kinds = (name: string) => () => children(name).map((s) => attr(s, 'demiurge.kind'));
    await expect.poll(kinds('demiurge.task'), { timeout: 20_000 }).toContain('terminal.exec');
    await expect.poll(kinds('demiurge.work'), { timeout: 20_000 }).toContain('delivery.send');
    await expect.poll(() => children('demiurge.delivery').length, { timeout: 20_000 }).toBe(1);

    // The log records the trace: `demiurge events` (JSON and text) and the dashboard's event log show it.
    const events = (await demiurge(['events', '--json', '--home', home.path])).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; meta: { traceId?: string; spanId?: string } });
    const inTrace = events.filter((e) => e.meta.traceId === turn.traceId).map((e) => e.type);
    for (const type of ['turn.started', 'tool_call.requested', 'task.started', 'work.claimed', 'delivery.sent']) {
      expect(inTrace).toContain(type);
    }
    expect(events.find((e) => e.type === 'work.claimed')!.meta.spanId).toBe(turn.spanId);
    const text = await demiurge(['events', '--type', 'turn.started', '--home', home.path]);
    expect(text.stdout).toContain(`trace=${turn.traceId}`);
    const page = await (await host.api('/events?type=turn.')).text();
    expect(page).toContain(`<code class="trace" title="OpenTelemetry trace id">${turn.traceId}</code>`);

    // Metrics over OTLP/HTTP: turn latency, claim latency and the queue depth gauge.
    const metricNames = () => otlp!.metrics.map((m) => m.name);
    for (const name of ['demiurge.turn.duration', 'demiurge.work.claim_latency', 'demiurge.queue.depth']) {
      await expect.poll(metricNames, { timeout: 20_000 }).toContain(name);
    }
    const turns = otlp.metrics.filter((m) => m.name === 'demiurge.turn.duration').at(-1)!;
    expect(Number(turns.histogram!.dataPoints[0]!.count)).toBeGreaterThanOrEqual(1);
    expect(otlp.paths).toContainEqual(expect.stringMatching(/^POST \/v1\/metrics application\/json/));
  }, 90_000);
});
