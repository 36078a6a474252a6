import { type EventMeta, type IdGenerator, IdPrefix, type NewEvent } from '@demiurge/contracts';
import { loadWork, NotFoundError, StaleClaimError, type WorkAggregate, type WorkClaim } from '@demiurge/control-plane';
import {
  type AppendOptions,
  type AppendStream,
  commandLoop,
  type EventStore,
  loadAggregate,
  streamAppend,
} from '@demiurge/event-store';
import {
  checkEvents,
  type DeliveryEventType,
  deliveryLifecycle,
  sessionLifecycle,
  type WorkEventType,
  workLifecycle,
} from '@demiurge/lifecycle';
import { type DeliveryCommand, decideDelivery } from './delivery.decider.js';
import { type DeliveryAggregate, loadDelivery } from './delivery-aggregate.js';

/**
 * What one fenced commit appends: work events, the delivery command (decided by `decideDelivery` on the
 * delivery as loaded in the same pass; none: no delivery event), and optional failure history text.
 */
export interface Decision {
  readonly work: NewEvent<WorkEventType>[];
  readonly delivery: DeliveryCommand | null;
  /** Recorded in the session as a `system`, `model_hidden` message (never an edit of the original). */
  readonly note?: string | undefined;
}

export interface CommitContext {
  readonly store: EventStore;
  readonly ids: IdGenerator;
  readonly now: () => string;
  readonly meta: Partial<EventMeta>;
}

/**
 * Appends a decision on a claimed delivery in one commit: the work item's events (machine-checked, and
 * only while `claim` is the item's current, unexpired claim), the delivery's events (machine-checked) and
 * the failure history message. Retries from a fresh load when another writer moved a stream.
 */
export function commitFenced(
  ctx: CommitContext,
  claim: WorkClaim,
  deliveryId: string,
  decide: (delivery: DeliveryAggregate, work: WorkAggregate) => Decision,
): Promise<void> {
  return commandLoop(ctx.store, async () => {
    const work = await loadWork(ctx.store, claim.workId);
    assertCurrentClaim(work, claim.claimToken, ctx.now());
    const delivery = await loadDelivery(ctx.store, deliveryId);
    const decision = decide(delivery, work);
    const streams: AppendStream[] = [
      streamAppend(
        workLifecycle.streamType,
        work,
        checkEvents(workLifecycle, work.state, decision.work, work.streamId),
      ),
    ];
    const events = decision.delivery ? decideDelivery(decision.delivery, delivery.state) : [];
    if (events.length > 0) streams.push(streamAppend(deliveryLifecycle.streamType, delivery, events));
    const { queued } = delivery.state;
    if (decision.note !== undefined && queued) {
      const history = await historyNote(ctx, queued.sessionId, decision.note);
      if (history) streams.push(history);
    }
    return { streams, result: undefined, options: appendOptions(ctx, delivery) };
  });
}

/**
 * Appends the delivery events that make the delivery agree with its work item (unfenced: they mirror
 * facts): `decideDelivery` of `agree_with_work` on the delivery and its work item as loaded in the same pass.
 */
export function commitDelivery(ctx: CommitContext, deliveryId: string): Promise<NewEvent<DeliveryEventType>[]> {
  return commandLoop(ctx.store, async () => {
    const delivery = await loadDelivery(ctx.store, deliveryId);
    const { queued } = delivery.state;
    if (!queued) throw new NotFoundError('delivery', deliveryId);
    const loaded = await loadWork(ctx.store, queued.workId);
    const work = loaded.state === 'none' ? null : loaded;
    const events = decideDelivery({ kind: 'agree_with_work', deliveryId, work }, delivery.state);
    return {
      streams: [streamAppend(deliveryLifecycle.streamType, delivery, events)],
      result: events,
      options: appendOptions(ctx, delivery),
    };
  });
}

/**
 * The claim check of `DurableWorkRuntime` (which does not take other streams into its commits):
 * the token must be the item's current one, and its lease must not have run out (a `sending` item
 * keeps its claimant: it is never claimed again anyway).
 */
export function assertCurrentClaim(work: WorkAggregate, claimToken: string, now: string): void {
  if (work.state === 'none') throw new NotFoundError('work item', work.streamId);
  if (work.claimToken !== claimToken) {
    const why = work.claimToken ? 'a newer claim holds it' : `it is ${work.state} and holds no claim`;
    throw new StaleClaimError(work.streamId, claimToken, why);
  }
  if (work.state !== 'sending' && work.leaseUntil !== null && work.leaseUntil < now) {
    throw new StaleClaimError(work.streamId, claimToken, `its lease expired at ${work.leaseUntil}`);
  }
}

/** The failure history message, on the session stream at its current version; none for an archived session. */
async function historyNote(ctx: CommitContext, sessionId: string, text: string): Promise<AppendStream | undefined> {
  const session = await loadAggregate(ctx.store, sessionLifecycle, sessionId);
  if (session.state !== 'active') return undefined;
  const messageId = ctx.ids.next(IdPrefix.message);
  const event: NewEvent = {
    type: 'message.recorded',
    data: { messageId, sessionId, role: 'system', text, visibility: 'model_hidden' },
  };
  return streamAppend(sessionLifecycle.streamType, session, [event]);
}

function appendOptions(ctx: CommitContext, delivery: DeliveryAggregate): AppendOptions {
  const { queued } = delivery.state;
  return { meta: { ...ctx.meta, ...(queued ? { sessionId: queued.sessionId } : {}) } };
}
