import type { DeliveryResolution, EventMeta } from '@demiurge/contracts';
import { loadWork, NotFoundError, WorkKind } from '@demiurge/control-plane';
import { commandLoop, type EventStore, streamAppend } from '@demiurge/event-store';
import { checkEvents, deliveryLifecycle, workLifecycle } from '@demiurge/lifecycle';
import { decideDelivery } from './delivery.decider.js';
import { loadDelivery } from './delivery-aggregate.js';

export interface ResolveUnknownDeliveryOptions {
  readonly note?: string;
  /** With `retry`: when it is due again (default now). */
  readonly retryAt?: string;
  /** The operator deciding: the events' actor. */
  readonly operator?: string;
  /** Meta of the commit (the actor unless `operator` is given). */
  readonly meta?: Partial<EventMeta>;
}

/**
 * An operator's decision on an unknown delivery: `delivery.resolved` and `work.resolved` in one
 * commit. `retry` queues it again (due at `retryAt`, or now): the only way an unknown delivery is
 * ever sent again. Repeating the same decision appends nothing. Needs no adapter or router: an admin
 * surface (the CLI, the dashboard) calls it on the store, and a serving host sends a retried one when due.
 */
export async function resolveUnknownDelivery(
  store: EventStore,
  deliveryId: string,
  decision: DeliveryResolution,
  options: ResolveUnknownDeliveryOptions = {},
): Promise<void> {
  await commandLoop(store, async () => {
    const delivery = await loadDelivery(store, deliveryId);
    const { queued } = delivery.state;
    if (!queued) throw new NotFoundError('delivery', deliveryId);
    const work = await loadWork(store, queued.workId);
    if (work.state === 'none') throw new NotFoundError('work item', queued.workId);
    const note = options.note ? { note: options.note } : {};
    // The work item first: an operator names it (`work resolve ID`), so its refusal is the one to read.
    const workEvents = checkEvents(
      workLifecycle,
      work.state,
      [
        {
          type: 'work.resolved',
          data: {
            workId: work.streamId,
            decision,
            ...note,
            ...(options.retryAt && decision === 'retry' ? { retryAt: options.retryAt } : {}),
          },
        },
      ],
      work.streamId,
    );
    const deliveryEvents = decideDelivery(
      { kind: 'resolve', deliveryId, decision, note: options.note, work },
      delivery.state,
    );
    return {
      streams: [
        streamAppend(deliveryLifecycle.streamType, delivery, deliveryEvents),
        streamAppend(workLifecycle.streamType, work, workEvents),
      ],
      result: undefined,
      options: {
        meta: {
          ...options.meta,
          ...(options.operator ? { actor: { kind: 'operator', id: options.operator } } : {}),
          sessionId: queued.sessionId,
        },
      },
    };
  });
}

/**
 * The delivery a `delivery.send` work item sends, from its payload; undefined for any other work item.
 */
export function deliveryOfWork(work: { readonly kind: string; readonly payload: unknown }): string | undefined {
  if (work.kind !== WorkKind.deliverySend) return undefined;
  const deliveryId = (work.payload as { deliveryId?: unknown } | null)?.deliveryId;
  return typeof deliveryId === 'string' ? deliveryId : undefined;
}
