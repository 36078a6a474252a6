import { eventField, type RecordedEvent } from '@demiurge/contracts';
import { operatorStatusReader } from '@demiurge/projector-operator-status';
import type { Counter, Histogram, Meter } from '@opentelemetry/api';
import type { HostStore } from '../store/host-store.js';

/** The statuses that count as waiting in a queue: work not yet claimed, tasks not yet started. */
const QUEUED = new Set(['queued', 'retry_scheduled', 'created']);
/** How many turns and work items are tracked between their start (or enqueue) and end (or claim). */
const KEPT = 50_000;

/**
 * The host's metrics, from the committed events and the operator-status read model:
 * - `demiurge.turn.duration` (histogram, s): from `turn.started` to its end, by `demiurge.outcome`;
 * - `demiurge.work.claim_latency` (histogram, s): from when a work item became claimable (enqueued, due, or
 *   due again after a failure or an expired lease) to its claim, by `demiurge.kind`;
 * - `demiurge.work.unknown` (counter): sends (work) whose outcome became unknown, by `demiurge.kind`;
 * - `demiurge.queue.depth` (gauge): queued work items and tasks now, by `demiurge.aggregate` (`work`, `task`);
 *   `demiurge.sends.unknown` (gauge): sends whose outcome is unknown now (both read from the operator-status
 *   counts when the metrics are collected, 0 included).
 */
export class EventMetrics {
  private readonly turnDuration: Histogram;
  private readonly claimLatency: Histogram;
  private readonly unknown: Counter;
  private readonly turnStarts = new Map<string, number>();
  private readonly claimable = new Map<string, { since: number; kind: string }>();
  /** Claimed work items' kinds (for their later retries and unknown outcomes). */
  private readonly kinds = new Map<string, { since: number; kind: string }>();

  constructor(meter: Meter, store: HostStore) {
    this.turnDuration = meter.createHistogram('demiurge.turn.duration', {
      unit: 's',
      description: 'How long turns took, from turn.started to their end',
    });
    this.claimLatency = meter.createHistogram('demiurge.work.claim_latency', {
      unit: 's',
      description: 'How long durable work waited, claimable, until a worker claimed it',
    });
    this.unknown = meter.createCounter('demiurge.work.unknown', {
      description: 'Sends whose outcome became unknown (an operator or a reconciler must resolve them)',
    });
    const queued = meter.createObservableGauge('demiurge.queue.depth', {
      description: 'Queued work items (not yet claimed) and tasks (not yet started)',
    });
    const unknownNow = meter.createObservableGauge('demiurge.sends.unknown', {
      description: 'Sends (work) whose outcome is unknown now, waiting for an operator or a reconciler',
    });
    // One read of the operator-status counts per collection serves both gauges. Each total is observed also
    // when it is 0, so an empty queue is a 0, not a gap.
    meter.addBatchObservableCallback(
      async (result) => {
        const { counts } = await operatorStatusReader(store).status();
        const totals = { work: 0, task: 0, unknown: 0 };
        for (const [key, count] of Object.entries(counts)) {
          const [aggregate, , status] = key.split('/');
          if (aggregate === 'work' && status === 'unknown') totals.unknown += count;
          if ((aggregate === 'work' || aggregate === 'task') && status && QUEUED.has(status))
            totals[aggregate] += count;
        }
        result.observe(queued, totals.work, { 'demiurge.aggregate': 'work' });
        result.observe(queued, totals.task, { 'demiurge.aggregate': 'task' });
        result.observe(unknownNow, totals.unknown);
      },
      [queued, unknownNow],
    );
  }

  /** Applies one committed event (in position order). */
  onEvent(e: RecordedEvent): void {
    const at = Date.parse(e.recordedAt);
    const text = (name: string) => {
      const value = eventField(e, name);
      return typeof value === 'string' ? value : undefined;
    };
    switch (e.type) {
      case 'turn.started':
        remember(this.turnStarts, e.streamId, at);
        return;
      case 'turn.completed':
      case 'turn.failed':
      case 'turn.cancelled': {
        const started = this.turnStarts.get(e.streamId);
        if (started === undefined) return;
        this.turnStarts.delete(e.streamId);
        this.turnDuration.record((at - started) / 1000, { 'demiurge.outcome': e.type.slice('turn.'.length) });
        return;
      }
      case 'work.enqueued': {
        const due = Date.parse(text('notBefore') ?? '');
        remember(this.claimable, e.streamId, { since: Math.max(at, due || 0), kind: text('kind') ?? 'unknown' });
        return;
      }
      case 'work.failed':
      case 'work.lease_expired':
      case 'work.resolved': {
        const known = this.claimable.get(e.streamId) ?? this.kinds.get(e.streamId);
        const retryAt = Date.parse(text('retryAt') ?? '');
        const again =
          e.type === 'work.lease_expired' || (e.type === 'work.failed' ? retryAt > 0 : text('decision') === 'retry');
        if (known && again)
          remember(this.claimable, e.streamId, { since: Math.max(at, retryAt || 0), kind: known.kind });
        return;
      }
      case 'work.claimed': {
        const waited = this.claimable.get(e.streamId);
        if (!waited) return;
        this.claimable.delete(e.streamId);
        remember(this.kinds, e.streamId, waited);
        this.claimLatency.record(Math.max(0, at - waited.since) / 1000, { 'demiurge.kind': waited.kind });
        return;
      }
      case 'work.unknown':
        this.unknown.add(1, { 'demiurge.kind': this.kinds.get(e.streamId)?.kind ?? 'unknown' });
        return;
    }
  }
}

function remember<T>(map: Map<string, T>, key: string, value: T): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > KEPT) map.delete(map.keys().next().value!);
}
