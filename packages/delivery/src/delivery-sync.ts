import { isEvent, type NewEvent, type RecordedEvent } from '@demiurge/contracts';
import {
  type DeliveryEventType,
  type DeliveryState,
  nextState,
  type WorkState,
  workLifecycle,
} from '@demiurge/lifecycle';

/** What a delivery reads of its work item: its state and its events (a loaded `WorkAggregate` is one). */
export interface WorkHistory {
  readonly state: WorkState;
  readonly events: readonly RecordedEvent[];
}

interface UnknownHistory {
  /** Why the work's last send became unknown; null when it never did. */
  readonly reason: string | null;
  /** The operator's decision since then, if any. */
  readonly resolution: { readonly decision: 'sent' | 'failed' | 'retry'; readonly note?: string } | null;
}

/** Reads from a work item's events why its last send became unknown, and how an operator resolved it. */
export function unknownHistory(work: WorkHistory): UnknownHistory {
  let state: WorkState = workLifecycle.initialState;
  let reason: string | null = null;
  let resolution: UnknownHistory['resolution'] = null;
  for (const event of work.events) {
    const next = nextState(workLifecycle, state, { type: event.type as never, data: event.data });
    if (next === 'unknown' && state !== 'unknown') {
      reason =
        isEvent(event, 'work.unknown') && event.data.reason
          ? event.data.reason
          : `the send was interrupted: its lease expired at ${event.recordedAt} with no outcome recorded (a crash or a stall)`;
      resolution = null;
    } else if (isEvent(event, 'work.resolved') && state === 'unknown') {
      const { decision, note } = event.data;
      resolution = { decision, ...(note ? { note } : {}) };
    }
    state = next ?? state;
  }
  return { reason, resolution };
}

/**
 * The delivery events that make a delivery agree with its work item, which is the authority on what
 * became of a send: a `sending` delivery whose work went `unknown` (an expired send lease) becomes
 * `unknown`; an `unknown` delivery whose work an operator resolved through `DurableWorkRuntime` gets the
 * same `delivery.resolved`. Anything else: none.
 */
export function mirrorEvents(
  deliveryId: string,
  status: DeliveryState,
  work: WorkHistory | null,
): NewEvent<DeliveryEventType>[] {
  if (!work || (status !== 'sending' && status !== 'unknown')) return [];
  const history = unknownHistory(work);
  const events: NewEvent<DeliveryEventType>[] = [];
  if (status === 'sending') {
    if (work.state === 'sending' || history.reason === null) return [];
    if (work.state !== 'unknown' && history.resolution === null) return [];
    events.push({ type: 'delivery.unknown', data: { deliveryId, reason: history.reason } });
  }
  if (work.state !== 'unknown' && history.resolution) {
    events.push({ type: 'delivery.resolved', data: { deliveryId, ...history.resolution } });
  }
  return events;
}
