import type { EventMeta, RecordedEvent } from '@demiurge/contracts';
import type { AppendStream } from '@demiurge/event-store';
import { collectCompletion, type ModelProvider } from '@demiurge/providers';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import type { HostStore } from '../store/host-store.js';
import { EventMetrics } from './event-metrics.js';
import { traceModelRequests } from './model-spans.js';
import { traceRoot } from './trace-ids.js';
import { TraceMeta, traceOf } from './trace-meta.js';

const stream = (
  streamType: string,
  streamId: string,
  events: AppendStream['events'],
  v: 'no_stream' | number = 'no_stream',
) => ({ streamType, streamId, expectedVersion: v, events }) as AppendStream;
const metaOf = (s: AppendStream[]) => s.flatMap((x) => x.events.map((e) => traceOf((e.meta ?? {}) as EventMeta)));

describe('TraceMeta: the trace context recorded in the events appended', () => {
  it('puts a turn and the detached work it causes in the turn trace, and reads back streams it never saw', async () => {
    const read: string[] = [];
    const elsewhere = traceRoot('trn_other');
    const tracker = new TraceMeta(async (id) => {
      read.push(id);
      return id === 'wrk_old' ? ({ actor: { kind: 'system', id: 't' }, ...elsewhere } as EventMeta) : undefined;
    });
    const turn = traceRoot('trn_1');
    const turnAppend = await tracker.annotate(
      [
        stream('run', 'run_1', [{ type: 'run.queued', data: { runId: 'run_1' } }]),
        stream('turn', 'trn_1', [{ type: 'turn.started', data: { turnId: 'trn_1' } }]),
      ],
      { meta: { turnId: 'trn_1' } },
    );
    expect(metaOf(turnAppend)).toEqual([turn, turn]);
    // A task names its run only; its completion work names the task; a delivery comes with its reply's message.
    const task = await tracker.annotate([
      stream('task', 'tsk_1', [{ type: 'task.submitted', data: { runId: 'run_1' } }]),
    ]);
    const work = await tracker.annotate([
      stream('work', 'wrk_1', [{ type: 'work.enqueued', data: { subjectId: 'tsk_1' } }]),
    ]);
    const delivery = await tracker.annotate([
      stream('session', 'ses_1', [{ type: 'message.recorded', data: {}, meta: { turnId: 'trn_1' } }], 3),
      stream('delivery', 'dlv_1', [{ type: 'delivery.queued', data: {} }]),
    ]);
    const later = await tracker.annotate([stream('delivery', 'dlv_1', [{ type: 'delivery.sending', data: {} }], 1)]);
    expect([...metaOf(task), ...metaOf(work), ...metaOf(delivery), ...metaOf(later)]).toEqual([
      turn,
      turn,
      turn,
      turn,
      turn,
    ]);
    // A work item enqueued before this process started: its first event's meta says its trace.
    const old = await tracker.annotate([stream('work', 'wrk_old', [{ type: 'work.claimed', data: {} }], 1)]);
    expect(metaOf(old)).toEqual([elsewhere]);
    // A schedule fire starts a trace of its own; a session event with no turn records none.
    const fire = await tracker.annotate([stream('schedule_instance', 'sci_1', [{ type: 'x.y', data: {} }])]);
    const plain = await tracker.annotate([stream('session', 'ses_2', [{ type: 'session.x', data: {} }], 1)]);
    expect(metaOf(fire)).toEqual([traceRoot('sci_1')]);
    expect(metaOf(plain)).toEqual([undefined]);
    expect(read).toEqual(['wrk_old']);
  });
});

describe('traceModelRequests: a span per model request', () => {
  it('is a child of its turn, with the model, token counts and the retries the provider made', async () => {
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('t');
    const told: number[] = [];
    const flaky: ModelProvider = {
      name: 'openai',
      model: 'm-1',
      async *complete(request) {
        request.onRetry?.({ attempt: 1, reason: 'HTTP 503' });
        request.onRetry?.({ attempt: 2, reason: 'HTTP 429' });
        yield { type: 'text', text: 'hi' };
        yield { type: 'done', usage: { inputTokens: 12, outputTokens: 3 }, finishReason: 'stop' };
      },
    };
    const traced = traceModelRequests(flaky, tracer);
    const labels = { turnId: 'trn_9', stepId: 's1' };
    const onRetry = (r: { attempt: number }) => told.push(r.attempt);
    expect((await collectCompletion(traced.complete({ messages: [], tools: [], labels, onRetry }))).content).toBe('hi');
    const [span] = exporter.getFinishedSpans();
    expect(span!.name).toBe('demiurge.model_request');
    expect(span!.spanContext().traceId).toBe(traceRoot('trn_9').traceId);
    expect(span!.parentSpanContext?.spanId).toBe(traceRoot('trn_9').spanId);
    expect(span!.attributes).toMatchObject({
      'gen_ai.request.model': 'm-1',
      'gen_ai.provider.name': 'openai',
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 3,
      'demiurge.turn_id': 'trn_9',
      'demiurge.step_id': 's1',
      'demiurge.retries': 2,
    });
    expect(span!.events.map((e) => e.attributes?.['demiurge.reason'])).toEqual(['HTTP 503', 'HTTP 429']);
    expect(told).toEqual([1, 2]); // the caller's own onRetry is still told
  });
});

describe('EventMetrics', () => {
  it('records turn latency, claim latency, unknown sends and the queue depth', async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 });
    const meters = new MeterProvider({ readers: [reader] });
    const projection = {
      entries: async () => [
        { id: 'work/delivery.send/queued', doc: 2 },
        { id: 'work/delivery.send/succeeded', doc: 5 },
        { id: 'task/terminal.exec/created', doc: 1 },
        { id: 'work/delivery.send/unknown', doc: 3 },
      ],
      list: async () => [],
      get: async () => undefined,
    };
    const metrics = new EventMetrics(meters.getMeter('t'), { projection: () => projection } as unknown as HostStore);
    let position = 0;
    const at = (s: number, type: string, streamId: string, data: object = {}) =>
      metrics.onEvent({
        position: ++position,
        type,
        streamId,
        data,
        meta: {},
        recordedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString(),
      } as unknown as RecordedEvent);
    at(0, 'turn.started', 'trn_1');
    at(4, 'turn.completed', 'trn_1');
    at(1, 'work.enqueued', 'wrk_1', { kind: 'delivery.send' });
    at(3, 'work.claimed', 'wrk_1');
    at(5, 'work.unknown', 'wrk_1');
    await reader.forceFlush();
    const all = exporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
    const metric = (name: string) => all.find((m) => m.descriptor.name === name)!;
    const turn = metric('demiurge.turn.duration').dataPoints[0]!;
    expect(turn.attributes).toEqual({ 'demiurge.outcome': 'completed' });
    expect((turn.value as { sum: number }).sum).toBe(4);
    expect((metric('demiurge.work.claim_latency').dataPoints[0]!.value as { sum: number }).sum).toBe(2);
    expect(metric('demiurge.work.unknown').dataPoints[0]).toMatchObject({
      value: 1,
      attributes: { 'demiurge.kind': 'delivery.send' },
    });
    expect(metric('demiurge.queue.depth').dataPoints.map((p) => [p.attributes['demiurge.aggregate'], p.value])).toEqual(
      [
        ['work', 2],
        ['task', 1],
      ],
    );
    expect(metric('demiurge.sends.unknown').dataPoints.map((p) => p.value)).toEqual([3]);
    await meters.shutdown();
  });
});
