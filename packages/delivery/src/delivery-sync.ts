import { isEvent, type NewEvent, type RecordedEvent } from '@demiurge/contracts';
import {
  type DeliveryEventType,
  type DeliveryState,
  evolveWork,
  initialWorkFacts,
  type WorkFacts,
  type WorkState,
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

/**
 * Reads from a work item's events why its last send became unknown, and how an operator resolved it, through
 * the one work fold: an event the machine refuses, or one naming a stale claim token, changes nothing here either.
 */
export function unknownHistory(work: WorkHistory): UnknownHistory {
  let facts: WorkFacts = initialWorkFacts;
  let reason: string | null = null;
  let resolution: UnknownHistory['resolution'] = null;
  for (const event of work.events) {
    const state = facts.status;
    const next = evolveWork(facts, event);
    if (next === undefined) continue;
    if (next.status === 'unknown' && state !== 'unknown') {
      reason =
        isEvent(event, 'work.unknown') && event.data.reason
          ? event.data.reason
          : `the send was interrupted: its lease expired at ${event.recordedAt} with no outcome recorded (a crash or a stall)`;
      resolution = null;
    } else if (isEvent(event, 'work.resolved') && state === 'unknown') {
      const { decision, note } = event.data;
      resolution = { decision, ...(note ? { note } : {}) };
    }
    facts = next;
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
