import { isEvent, type NewEvent } from '@demiurge/contracts';
import type { WorkAggregate } from '@demiurge/control-plane';
import { type DeliveryEventType, nextState, type WorkState, workLifecycle } from '@demiurge/lifecycle';
import type { DeliveryAggregate } from './delivery-aggregate.js';

interface UnknownHistory {
  /** Why the work's last send became unknown; null when it never did. */
  readonly reason: string | null;
  /** The operator's decision since then, if any. */
  readonly resolution: { readonly decision: 'sent' | 'failed' | 'retry'; readonly note?: string } | null;
}

/** Reads from a work item's events why its last send became unknown, and how an operator resolved it. */
export function unknownHistory(work: WorkAggregate): UnknownHistory {
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
export function mirrorEvents(delivery: DeliveryAggregate, work: WorkAggregate | null): NewEvent<DeliveryEventType>[] {
  if (!work || (delivery.state !== 'sending' && delivery.state !== 'unknown')) return [];
  const deliveryId = delivery.streamId;
  const history = unknownHistory(work);
  const events: NewEvent<DeliveryEventType>[] = [];
  if (delivery.state === 'sending') {
    if (work.state === 'sending' || history.reason === null) return [];
    if (work.state !== 'unknown' && history.resolution === null) return [];
    events.push({ type: 'delivery.unknown', data: { deliveryId, reason: history.reason } });
  }
  if (work.state !== 'unknown' && history.resolution) {
    events.push({ type: 'delivery.resolved', data: { deliveryId, ...history.resolution } });
  }
  return events;
}
