import type { RecordedEvent } from '@demiurge/contracts';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { EventSpans } from './event-spans.js';
import { TraceIdSlot, traceRoot } from './trace-ids.js';

let position = 0;
const event = (type: string, streamId: string, data: object, meta: object = {}): RecordedEvent =>
  ({
    position: ++position,
    type,
    streamId,
    data,
    meta: { actor: { kind: 'system', id: 't' }, sessionId: 'ses_1', ...meta },
    recordedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, position)).toISOString(),
  }) as unknown as RecordedEvent;

function setup() {
  const exporter = new InMemorySpanExporter();
  const ids = new TraceIdSlot();
  const provider = new BasicTracerProvider({ idGenerator: ids, spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, provider, spans: new EventSpans(provider.getTracer('test'), ids) };
}

describe('EventSpans', () => {
  it('makes a turn span with its tool call and its detached task as children, and marks failures', async () => {
    const { exporter, provider, spans } = setup();
    const turn = { turnId: 'trn_1' };
    for (const e of [
      event('turn.started', 'ses_1', turn, { runId: 'run_1' }),
      event('tool_call.requested', 'tcl_1', { tool: 'shell' }, turn),
      event('task.submitted', 'tsk_1', { kind: 'terminal.exec' }, turn),
      event('tool_call.succeeded', 'tcl_1', {}, turn),
      event('turn.model_responded', 'ses_1', turn),
      event('turn.completed', 'ses_1', turn),
      event('task.started', 'tsk_1', {}),
      event('task.failed', 'tsk_1', { error: { code: 'exit', message: 'exit 1' } }),
      event('work.claimed', 'wrk_1', { kind: 'delivery.send' }),
    ]) {
      spans.onEvent(e);
    }
    spans.endAll(new Date(Date.UTC(2026, 0, 1, 0, 1)));
    await provider.forceFlush();
    const byName = new Map(exporter.getFinishedSpans().map((s) => [s.name, s]));
    const turnSpan = byName.get('demiurge.turn')!;
    const tool = byName.get('demiurge.tool_call')!;
    const task = byName.get('demiurge.task')!;
    expect(turnSpan.attributes).toMatchObject({ 'demiurge.turn_id': 'trn_1', 'demiurge.run_id': 'run_1' });
    expect(turnSpan.events.map((e) => e.name)).toEqual(['model responded']);
    expect(tool.parentSpanContext?.spanId).toBe(turnSpan.spanContext().spanId);
    expect(tool.spanContext().traceId).toBe(turnSpan.spanContext().traceId);
    expect(tool.attributes).toMatchObject({ 'demiurge.tool': 'shell', 'demiurge.outcome': 'succeeded' });
    // The task started after its turn ended: still the turn's child (detached work keeps its parent).
    expect(task.parentSpanContext?.spanId).toBe(turnSpan.spanContext().spanId);
    expect(task.status).toMatchObject({ code: 2, message: 'failed: exit: exit 1' });
    expect(byName.get('demiurge.work')!.attributes['demiurge.outcome']).toBe('open at close');
  });

  it('gives a turn span the ids the log records, and parents detached work by the trace context in its meta', async () => {
    const { exporter, provider, spans } = setup();
    const root = traceRoot('trn_2');
    const traced = { traceId: root.traceId, spanId: root.spanId };
    for (const e of [
      event('turn.started', 'trn_2', { turnId: 'trn_2' }),
      event('turn.completed', 'trn_2', { turnId: 'trn_2' }),
      // A delivery's work claim and send, after the turn ended: only their meta names the turn's trace.
      event('work.claimed', 'wrk_2', { workId: 'wrk_2' }, traced),
      event('delivery.sending', 'dlv_2', { deliveryId: 'dlv_2' }, traced),
      event('delivery.sent', 'dlv_2', {}, traced),
      event('work.succeeded', 'wrk_2', {}, traced),
      event('schedule_instance.claimed', 'sci_1', {}),
      event('schedule_instance.completed', 'sci_1', {}),
    ]) {
      spans.onEvent(e);
    }
    await provider.forceFlush();
    const byName = new Map(exporter.getFinishedSpans().map((s) => [s.name, s]));
    const turn = byName.get('demiurge.turn')!;
    expect(turn.spanContext()).toMatchObject(root);
    for (const name of ['demiurge.work', 'demiurge.delivery']) {
      expect(byName.get(name)!.spanContext().traceId).toBe(root.traceId);
      expect(byName.get(name)!.parentSpanContext?.spanId).toBe(root.spanId);
    }
    const fire = byName.get('demiurge.schedule_instance')!;
    expect(fire.spanContext()).toMatchObject(traceRoot('sci_1'));
    expect(fire.parentSpanContext).toBeUndefined();
  });
});
