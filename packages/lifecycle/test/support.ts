import type { RecordedEvent } from '@demiurge/contracts';
import { transition } from 'xstate';
import type { Lifecycle, LifecycleEvent } from '../src/index.js';

const RETRY_AT = '2026-01-01T00:05:00.000Z';

/** Data variants that pick each branch of a guarded event; every other event is sampled without data. */
export const GUARD_VARIANTS: Readonly<Record<string, readonly unknown[]>> = {
  'work.failed': [{ retryAt: RETRY_AT }, {}],
  'work.resolved': [{ decision: 'sent' }, { decision: 'failed' }, { decision: 'retry' }],
  'delivery.resolved': [{ decision: 'sent' }, { decision: 'failed' }, { decision: 'retry' }],
  'tool_call.resolved': [{ decision: 'succeeded' }, { decision: 'failed' }],
};

/** Every event of a lifecycle's vocabulary, guarded ones once per data variant. */
export function sampleEvents(lifecycle: Lifecycle): LifecycleEvent[] {
  return lifecycle.events.flatMap((type) =>
    (GUARD_VARIANTS[type] ?? [undefined]).map((data) => (data === undefined ? { type } : { type, data })),
  );
}

/** A readable key for a sampled event. */
export function eventKey(event: LifecycleEvent): string {
  return event.data === undefined ? event.type : `${event.type} ${JSON.stringify(event.data)}`;
}

/**
 * The reference answer, straight from xstate's public pure API (`snapshot.can` and `transition`),
 * independent of the package's memoized `machineStep`.
 */
export function referenceStep(lifecycle: Lifecycle, state: string, event: LifecycleEvent): string | undefined {
  const snapshot = lifecycle.machine.resolveState({ value: state, context: {} });
  const xstateEvent = { type: event.type, data: event.data };
  if (!snapshot.can(xstateEvent)) return undefined;
  return transition(lifecycle.machine, snapshot, xstateEvent)[0].value as string;
}

export interface LogEntry {
  readonly streamType: string;
  readonly streamId: string;
  readonly type: string;
  readonly data?: unknown;
  /** Overrides the contiguous version the log would give it. */
  readonly streamVersion?: number;
}

/** Recorded events for entries in log order: positions 1.., versions contiguous per stream. */
export function recordLog(entries: readonly LogEntry[]): RecordedEvent[] {
  const versions = new Map<string, number>();
  return entries.map((entry, index) => {
    const version = entry.streamVersion ?? (versions.get(entry.streamId) ?? 0) + 1;
    versions.set(entry.streamId, version);
    return {
      position: index + 1,
      eventId: `evt_${index + 1}`,
      streamType: entry.streamType,
      streamId: entry.streamId,
      streamVersion: version,
      type: entry.type,
      schemaVersion: 1,
      data: entry.data ?? {},
      meta: { actor: { kind: 'system', id: 'test' } },
      recordedAt: '2026-01-01T00:00:00.000Z',
    };
  });
}

/** Yields the events asynchronously, as `store.iterate()` does. */
export async function* asAsync<T>(items: Iterable<T>): AsyncGenerator<T> {
  for (const item of items) yield item;
}
