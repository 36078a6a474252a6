import { eventField, type RecordedEvent } from '@demiurge/contracts';
import { ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, TraceFlags, type Tracer, trace } from '@opentelemetry/api';
import { type TraceIdSlot, type TraceRef, traceRoot } from './trace-ids.js';
import { traceOf } from './trace-meta.js';

/** What starts a span and what ends it, per aggregate (the span's key is the event's stream id). */
const KINDS: readonly { prefix: string; start: string; end: readonly string[]; failed: readonly string[] }[] = [
  {
    prefix: 'tool_call',
    start: 'tool_call.requested',
    end: ['succeeded', 'failed', 'denied', 'cancelled', 'unknown'],
    failed: ['failed', 'unknown'],
  },
  { prefix: 'task', start: 'task.started', end: ['completed', 'failed', 'cancelled'], failed: ['failed'] },
  {
    prefix: 'work',
    start: 'work.claimed',
    end: ['succeeded', 'failed', 'cancelled', 'unknown', 'lease_expired'],
    failed: ['failed', 'unknown', 'lease_expired'],
  },
  { prefix: 'delivery', start: 'delivery.sending', end: ['sent', 'failed', 'unknown'], failed: ['failed', 'unknown'] },
  { prefix: 'schedule_instance', start: 'schedule_instance.claimed', end: ['completed', 'failed'], failed: ['failed'] },
];
const TURN_END = ['turn.completed', 'turn.failed', 'turn.cancelled'];
/** How many tasks' and work items' kinds and submitting turns are kept (oldest forgotten first). */
const KEPT = 10_000;

/**
 * Turns committed events into OpenTelemetry spans: a turn (from `turn.started` to its end), each tool call
 * under its turn, each detached task, work claim and delivery send under the turn that caused it (the trace
 * context its events' meta records, see {@link TraceMeta}; also when it starts after that turn ended or in
 * another process), each schedule fire as a trace of its own; times are the events' `recordedAt`, attributes
 * the runtime's ids. A turn's span and a schedule fire's carry the ids {@link traceRoot} derives from their ids,
 * the ids the log records. The spans are derived from the log, so they cost the runtime nothing when telemetry
 * is off (this class is not even loaded then).
 */
export class EventSpans {
  private readonly open = new Map<string, Span>();
  /** A task's submitting turn (from `task.submitted`), for tasks whose events record no trace context. */
  private readonly taskTurn = new Map<string, string>();
  /** Tasks' and work items' kinds (from `task.submitted`, `work.enqueued`), for their spans' attributes. */
  private readonly kinds = new Map<string, string>();

  constructor(
    private readonly tracer: Tracer,
    /** The id generator of the tracer's provider (its roots get the ids the log records). */
    private readonly ids: TraceIdSlot,
  ) {}

  /** Applies one committed event (in position order). */
  onEvent(e: RecordedEvent): void {
    const at = new Date(e.recordedAt);
    const field = (name: string) => eventField(e, name);
    const dataTurnId = field('turnId');
    const turnId = typeof dataTurnId === 'string' ? dataTurnId : e.meta.turnId;
    if (e.type === 'turn.started' && turnId) {
      this.startRoot(`turn:${turnId}`, 'demiurge.turn', at, traceRoot(turnId), {
        ...ids(e),
        'demiurge.turn_id': turnId,
      });
      return;
    }
    if (e.type === 'turn.model_responded' && turnId) {
      this.open.get(`turn:${turnId}`)?.addEvent('model responded', at);
      return;
    }
    if (TURN_END.includes(e.type) && turnId) {
      this.end(`turn:${turnId}`, at, e.type === 'turn.failed' ? failure(e) : undefined);
      return;
    }
    if (e.type === 'task.submitted' || e.type === 'work.enqueued') {
      const kind = field('kind');
      if (typeof kind === 'string') keep(this.kinds, e.streamId, kind);
      if (e.type === 'task.submitted' && turnId) keep(this.taskTurn, e.streamId, turnId);
    }
    const kind = KINDS.find((k) => e.type.startsWith(`${k.prefix}.`));
    if (!kind) return;
    const key = `${kind.prefix}:${e.streamId}`;
    const outcome = e.type.slice(kind.prefix.length + 1);
    if (e.type === kind.start) {
      const attributes = { ...ids(e), [`demiurge.${kind.prefix}_id`]: e.streamId };
      const tool = field('tool');
      const itemKind = field('kind') ?? this.kinds.get(e.streamId);
      if (typeof tool === 'string') attributes['demiurge.tool'] = tool;
      if (typeof itemKind === 'string') attributes['demiurge.kind'] = itemKind;
      if (kind.prefix === 'schedule_instance') {
        this.startRoot(key, `demiurge.${kind.prefix}`, at, traceRoot(e.streamId), attributes);
      } else {
        const parentTurn = kind.prefix === 'task' ? this.taskTurn.get(e.streamId) : turnId;
        const parent = traceOf(e.meta) ?? (parentTurn ? traceRoot(parentTurn) : undefined);
        this.start(key, `demiurge.${kind.prefix}`, at, parent, attributes);
      }
    } else if (kind.end.includes(outcome)) {
      this.end(key, at, kind.failed.includes(outcome) ? `${outcome}: ${failure(e) ?? ''}` : undefined, outcome);
    }
  }

  /** Ends every span still open (the host is closing). */
  endAll(at = new Date()): void {
    for (const key of [...this.open.keys()]) this.end(key, at, undefined, 'open at close');
  }

  /** A span under `parent` (the trace context of the turn that caused it), or a root span without one. */
  private start(key: string, name: string, at: Date, parent: TraceRef | undefined, attributes: Attributes) {
    const ctx = parent
      ? trace.setSpanContext(ROOT_CONTEXT, { ...parent, traceFlags: TraceFlags.SAMPLED, isRemote: true })
      : ROOT_CONTEXT;
    this.open.set(key, this.tracer.startSpan(name, { startTime: at, kind: SpanKind.INTERNAL, attributes }, ctx));
  }

  /** A root span with the ids `ref` (the ids the log records for it). */
  private startRoot(key: string, name: string, at: Date, ref: TraceRef, attributes: Attributes) {
    this.ids.with(ref, () => this.start(key, name, at, undefined, attributes));
  }

  private end(key: string, at: Date, error: string | undefined, outcome?: string) {
    const span = this.open.get(key);
    if (!span) return;
    this.open.delete(key);
    if (outcome) span.setAttribute('demiurge.outcome', outcome);
    span.setStatus(error === undefined ? { code: SpanStatusCode.OK } : { code: SpanStatusCode.ERROR, message: error });
    span.end(at);
  }
}

type Attributes = Record<string, string>;

function keep(map: Map<string, string>, key: string, value: string): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > KEPT) map.delete(map.keys().next().value!);
}

function ids(e: RecordedEvent): Record<string, string> {
  const out: Record<string, string> = { 'demiurge.event_type': e.type };
  if (e.meta.sessionId) out['demiurge.session_id'] = e.meta.sessionId;
  if (e.meta.runId) out['demiurge.run_id'] = e.meta.runId;
  return out;
}

function failure(e: RecordedEvent): string | undefined {
  const error = eventField(e, 'error');
  if (error !== null && typeof error === 'object') {
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (typeof message === 'string') return `${typeof code === 'string' ? code : 'error'}: ${message}`;
  }
  const reason = eventField(e, 'reason');
  return typeof reason === 'string' ? reason : undefined;
}
