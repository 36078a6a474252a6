import { type EventMeta, eventField, type RecordedEvent } from '@demiurge/contracts';
import type { AppendOptions, AppendStream, EventStore } from '@demiurge/event-store';
import { type TraceRef, traceRoot } from './trace-ids.js';

/** Stream types whose whole life belongs to one trace (a session's or a core's does not: it spans many turns). */
const TRACED_STREAMS = new Set([
  'run',
  'turn',
  'tool_call',
  'task',
  'work',
  'delivery',
  'schedule_instance',
  'slot_run',
  'approval',
]);
/** Data fields naming another aggregate whose trace an event joins (a work item's subject, a task's run...). */
const REFERENCES = ['taskId', 'deliveryId', 'subjectId', 'workId', 'toolCallId', 'runId', 'parentTaskId'] as const;
/** How many aggregates' traces are remembered (oldest forgotten first; a forgotten one is read back). */
const KEPT = 50_000;
/** Remembered for a stream whose first event carries no trace (appended with telemetry off). */
const NO_TRACE = { traceId: '', spanId: '' } as const;

/** The trace context an event's meta records, when it records one. */
export function traceOf(meta: EventMeta): TraceRef | undefined {
  const { traceId, spanId } = meta as { traceId?: unknown; spanId?: unknown };
  return typeof traceId === 'string' && typeof spanId === 'string' && traceId && spanId
    ? { traceId, spanId }
    : undefined;
}

/**
 * Records the trace context in the meta of every event the host appends (`traceId`, and `spanId`: the span the
 * event's aggregate hangs under), so a log entry leads to its trace. A turn starts a trace ({@link traceRoot} of
 * its id: every event naming the turn joins it); detached work carries the trace of the turn that caused it:
 * a task its run's, a work item its subject's, a delivery the trace of the reply it sends, a schedule fire its
 * own. Aggregates are remembered as their events pass (other processes' too, through {@link observe}); one met
 * for the first time is read back from its first event.
 */
export class TraceMeta {
  private readonly traces = new Map<string, TraceRef>();

  constructor(private readonly firstEventMeta: (streamId: string) => Promise<EventMeta | undefined>) {}

  /** Remembers the trace of a committed event's aggregate (this process's or another's). */
  observe(e: RecordedEvent): void {
    const ref = traceOf(e.meta);
    if (ref && TRACED_STREAMS.has(e.streamType)) this.remember(e.streamId, ref);
  }

  /** `streams` with the trace context in each event's meta (kept where an event names its own). */
  async annotate(streams: readonly AppendStream[], options?: AppendOptions): Promise<AppendStream[]> {
    const refs = streams.map((s) => s.events.map((e) => this.resolve(s, e, options)));
    const shared = refs.flat().find((r) => r !== undefined);
    for (const [i, s] of streams.entries()) {
      if (refs[i]!.every((r) => r !== undefined) || !TRACED_STREAMS.has(s.streamType)) continue;
      const known = shared ?? (s.expectedVersion === 'no_stream' ? undefined : await this.readBack(s.streamId));
      refs[i] = refs[i]!.map((r) => r ?? known);
      if (known) this.remember(s.streamId, known);
    }
    return this.withRefs(streams, refs, shared);
  }

  /**
   * {@link annotate} without reading anything back: for appends decided under the store's write lock
   * ({@link EventStore.appendDecided}), whose streams are known only inside the lock, where nothing may wait. A
   * stream this process has not seen an event of (nor read back) gets no trace.
   */
  annotateKnown(streams: readonly AppendStream[], options?: AppendOptions): AppendStream[] {
    const refs = streams.map((s) => s.events.map((e) => this.resolve(s, e, options)));
    return this.withRefs(
      streams,
      refs,
      refs.flat().find((r) => r !== undefined),
    );
  }

  private withRefs(
    streams: readonly AppendStream[],
    refs: (TraceRef | undefined)[][],
    shared: TraceRef | undefined,
  ): AppendStream[] {
    return streams.map((s, i) => ({
      ...s,
      events: s.events.map((e, j) => {
        const ref = refs[i]![j] ?? shared;
        return ref && !traceOf((e.meta ?? {}) as EventMeta) ? { ...e, meta: { ...e.meta, ...ref } } : e;
      }),
    }));
  }

  private resolve(
    stream: AppendStream,
    e: AppendStream['events'][number],
    options: AppendOptions | undefined,
  ): TraceRef | undefined {
    const own = traceOf((e.meta ?? {}) as EventMeta);
    const dataTurn = field(e.data, 'turnId');
    const turnId = e.meta?.turnId ?? options?.meta?.turnId ?? dataTurn;
    const traced = TRACED_STREAMS.has(stream.streamType);
    let ref = own ?? (turnId ? traceRoot(turnId) : undefined);
    if (!ref && traced) ref = this.known(stream.streamId);
    for (const key of REFERENCES) {
      if (ref) break;
      const id = field(e.data, key);
      if (id) ref = this.known(id);
    }
    const runId = e.meta?.runId ?? options?.meta?.runId;
    if (!ref && runId) ref = this.known(runId);
    if (!ref && stream.streamType === 'schedule_instance') ref = traceRoot(stream.streamId);
    if (ref && traced) this.remember(stream.streamId, ref);
    return ref;
  }

  private known(id: string): TraceRef | undefined {
    const ref = this.traces.get(id);
    return ref === NO_TRACE ? undefined : ref;
  }

  private async readBack(streamId: string): Promise<TraceRef | undefined> {
    if (this.traces.has(streamId)) return this.known(streamId);
    const meta = await this.firstEventMeta(streamId);
    const ref = meta ? traceOf(meta) : undefined;
    this.remember(streamId, ref ?? NO_TRACE);
    return ref;
  }

  private remember(id: string, ref: TraceRef): void {
    this.traces.delete(id);
    this.traces.set(id, ref);
    if (this.traces.size > KEPT) this.traces.delete(this.traces.keys().next().value!);
  }
}

/**
 * Makes `store` record trace contexts ({@link TraceMeta}) in the events appended through it: its `append` (and
 * `appendDecided`, where the store has it) is wrapped in place (every part of the host holds this one store
 * object). Returns the tracker.
 */
export function recordTraceMeta(store: EventStore): TraceMeta {
  const tracker = new TraceMeta(async (streamId) => (await store.readStream(streamId, { limit: 1 }))[0]?.meta);
  const append = store.append.bind(store);
  const traced: EventStore['append'] = async (streams, options) =>
    append(await tracker.annotate(Array.isArray(streams) ? streams : [streams as AppendStream], options), options);
  Object.defineProperty(store, 'append', { value: traced, configurable: true, writable: true });
  if (store.appendDecided) {
    // Claims on PostgreSQL are decided under the log-head lock: their streams get the traces known here.
    const decided = store.appendDecided.bind(store);
    const tracedDecided: NonNullable<EventStore['appendDecided']> = (request) =>
      decided({
        ...request,
        decide: (listed, taken) => {
          const out = request.decide(listed, taken);
          return { ...out, streams: tracker.annotateKnown(out.streams, request.options) };
        },
      });
    Object.defineProperty(store, 'appendDecided', { value: tracedDecided, configurable: true, writable: true });
  }
  return tracker;
}

function field(data: unknown, key: string): string | undefined {
  const value = eventField({ data }, key);
  return typeof value === 'string' && value !== '' ? value : undefined;
}
