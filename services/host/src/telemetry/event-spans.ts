import { eventField, type RecordedEvent } from '@demiurge/contracts';
import { context, type Span, type SpanContext, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';

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
/** How many turns' span contexts are kept for children that start after their turn ended. */
const KEPT_TURNS = 10_000;

/**
 * Turns committed events into OpenTelemetry spans: a turn (from `turn.started` to its end), each tool call
 * under its turn, each detached task under the turn that submitted it, each work claim until its outcome,
 * each delivery send, each schedule fire; times are the events' `recordedAt`, attributes the runtime's ids.
 * Model responses are events on their turn's span. The spans are derived from the log, so they cost the
 * runtime nothing when telemetry is off (this class is not even loaded then).
 */
export class EventSpans {
  private readonly open = new Map<string, Span>();
  /** Turns' span contexts, kept after they end so detached work started later links to them (bounded). */
  private readonly turns = new Map<string, SpanContext>();
  /** A task's submitting turn (from `task.submitted`), so its span is a child of that turn's. */
  private readonly taskTurn = new Map<string, string>();

  constructor(private readonly tracer: Tracer) {}

  /** Applies one committed event (in position order). */
  onEvent(e: RecordedEvent): void {
    const at = new Date(e.recordedAt);
    const field = (name: string) => eventField(e, name);
    const dataTurnId = field('turnId');
    const turnId = typeof dataTurnId === 'string' ? dataTurnId : e.meta.turnId;
    if (e.type === 'turn.started' && turnId) {
      this.start(`turn:${turnId}`, 'demiurge.turn', at, undefined, { ...ids(e), 'demiurge.turn_id': turnId });
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
    if (e.type === 'task.submitted' && e.meta.turnId) this.taskTurn.set(e.streamId, e.meta.turnId);
    const kind = KINDS.find((k) => e.type.startsWith(`${k.prefix}.`));
    if (!kind) return;
    const key = `${kind.prefix}:${e.streamId}`;
    const outcome = e.type.slice(kind.prefix.length + 1);
    if (e.type === kind.start) {
      const parentTurn = kind.prefix === 'task' ? this.taskTurn.get(e.streamId) : turnId;
      const attributes = { ...ids(e), [`demiurge.${kind.prefix}_id`]: e.streamId };
      const tool = field('tool');
      const taskKind = field('kind');
      if (typeof tool === 'string') attributes['demiurge.tool'] = tool;
      if (typeof taskKind === 'string') attributes['demiurge.kind'] = taskKind;
      this.start(key, `demiurge.${kind.prefix}`, at, parentTurn ? `turn:${parentTurn}` : undefined, attributes);
    } else if (kind.end.includes(outcome)) {
      this.end(key, at, kind.failed.includes(outcome) ? `${outcome}: ${failure(e) ?? ''}` : undefined, outcome);
    }
  }

  /** Ends every span still open (the host is closing). */
  endAll(at = new Date()): void {
    for (const key of [...this.open.keys()]) this.end(key, at, undefined, 'open at close');
  }

  private start(
    key: string,
    name: string,
    at: Date,
    parentKey: string | undefined,
    attributes: Record<string, string>,
  ) {
    const parent = parentKey ? (this.open.get(parentKey)?.spanContext() ?? this.turns.get(parentKey)) : undefined;
    const ctx = parent ? trace.setSpanContext(context.active(), parent) : context.active();
    const span = this.tracer.startSpan(name, { startTime: at, kind: SpanKind.INTERNAL, attributes }, ctx);
    this.open.set(key, span);
    if (key.startsWith('turn:')) {
      this.turns.set(key, span.spanContext());
      if (this.turns.size > KEPT_TURNS) this.turns.delete(this.turns.keys().next().value!);
    }
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
