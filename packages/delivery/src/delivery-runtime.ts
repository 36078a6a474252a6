import type { Clock, DeliveryResolution, EventMeta, IdGenerator } from '@demiurge/contracts';
import { type DurableWorkRuntime, loadWork, NotFoundError, WorkKind } from '@demiurge/control-plane';
import type { EventStore } from '@demiurge/event-store';
import { type DeliveryView, deliveryStatusKey, deliveryStatusPrefix, outboxReader } from '@demiurge/projector-outbox';
import { ClaimDispatch, type DispatchDeps, type DispatchOutcome, syncDelivery } from './claim-dispatch.js';
import { type ResolveUnknownDeliveryOptions, resolveUnknownDelivery } from './resolve-unknown.js';
import { defaultRetryPolicy, defaultUnroutedRetryPolicy, type RetryPolicy } from './retry-policy.js';
import type { SessionInteractionRouter } from './session-interaction-router.js';

export interface DeliveryRuntimeOptions {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly work: DurableWorkRuntime;
  readonly router: SessionInteractionRouter;
  /** Who dispatches: the actor of every event it appends. */
  readonly owner: string;
  /** Retryable adapter failures: when to try again. Default {@link defaultRetryPolicy}. */
  readonly retry?: RetryPolicy;
  /** No live route: when to look again. Default {@link defaultUnroutedRetryPolicy}. */
  readonly unroutedRetry?: RetryPolicy;
  /** Record a `system`, `model_hidden` message in the session when a delivery fails for good. Default true. */
  readonly failureHistory?: boolean;
  /**
   * How often `dispatchDue` also looks for sends whose lease ran out (their host died mid-send) and records
   * them `unknown` ({@link DeliveryRuntime.expireSends}). Default 1 s; 0 looks on every call.
   */
  readonly expireSendsEveryMs?: number;
  readonly meta?: Partial<EventMeta>;
}

/** What {@link DeliveryRuntime.recover} appended. */
export interface DeliveryRecoverReport {
  /** Sending deliveries whose work became unknown, now `delivery.unknown`. */
  readonly unknown: number;
  /** Unknown deliveries whose work an operator resolved through `DurableWorkRuntime`, now `delivery.resolved`. */
  readonly resolved: number;
}

/**
 * Dispatches queued deliveries (seed 003 DeliveryRuntime): claims due `delivery.send` work, records the
 * intent (`delivery.sending` + `work.sending`, one commit) before the adapter is called, then records the
 * outcome with the work item, fenced by the claim token:
 *
 * | adapter | delivery | work |
 * | --- | --- | --- |
 * | accepted | `sent` | `succeeded` (externalRef) |
 * | raised, retryable | `failed` | `failed` with `retryAt` (backoff), final when attempts run out |
 * | raised, not retryable | `failed` | `failed`, final |
 * | no live route | `unrouted` | `failed` with `retryAt` (unrouted backoff), final when attempts run out |
 * | unknown outcome (timeout/reset after sending) | `unknown` | `unknown`: never re-sent automatically |
 *
 * Register `controlPlaneProjectors` (outbox and work-items) with the store.
 *
 * @example
 * const delivery = new DeliveryRuntime({ store, clock, ids, work, router, owner: 'host-1' });
 * await delivery.dispatchDue({ limit: 16 });
 * await work.recover(); await delivery.recover(); // after a restart
 */
export class DeliveryRuntime {
  private readonly deps: DispatchDeps;
  private nextExpiryCheck = 0;

  constructor(private readonly options: DeliveryRuntimeOptions) {
    this.deps = {
      ctx: {
        store: options.store,
        ids: options.ids,
        now: () => new Date(options.clock.now()).toISOString(),
        meta: { actor: { kind: 'system', id: options.owner }, ...options.meta },
      },
      clock: options.clock,
      router: options.router,
      retry: options.retry ?? defaultRetryPolicy,
      unroutedRetry: options.unroutedRetry ?? defaultUnroutedRetryPolicy,
      failureHistory: options.failureHistory ?? true,
    };
  }

  /**
   * Claims up to `limit` due deliveries and dispatches them concurrently; resolves when every one has
   * an outcome recorded. `signal` aborts sends in flight (their outcome is then unknown). When some
   * could not be dispatched (a store error), throws after the others settle.
   */
  async dispatchDue(options: { limit: number; leaseMs?: number; signal?: AbortSignal }): Promise<DispatchOutcome[]> {
    const now = this.options.clock.now();
    if (now >= this.nextExpiryCheck) {
      this.nextExpiryCheck = now + (this.options.expireSendsEveryMs ?? 1_000);
      await this.expireSends(now);
    }
    const claims = await this.options.work.claimDue({
      kind: WorkKind.deliverySend,
      limit: options.limit,
      ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
    });
    const settled = await Promise.allSettled(
      claims.map((claim) => new ClaimDispatch(this.deps, claim).run(options.signal)),
    );
    const failures = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : []));
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) {
      throw new AggregateError(failures, `${failures.length} of ${claims.length} deliveries could not be dispatched`);
    }
    return settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  }

  /**
   * Sends whose lease ran out while `sending` (their host died between recording the intent and the
   * outcome): the work item becomes `unknown` (`work.lease_expired`) and its delivery `delivery.unknown`,
   * never re-sent automatically. Any live host does it, on its own clock (the database's on PostgreSQL), so
   * a dead host's sends are settled within their lease, not when some host next starts. Returns how many.
   */
  async expireSends(now = this.options.clock.now()): Promise<number> {
    const expired = await this.options.work.expireLeases({ kind: WorkKind.deliverySend, statuses: ['sending'], now });
    for (const { workId } of expired) {
      const work = await loadWork(this.options.store, workId);
      const deliveryId = (work.payload as { deliveryId?: unknown } | null)?.deliveryId;
      if (typeof deliveryId === 'string') await syncDelivery(this.deps.ctx, deliveryId);
    }
    return expired.length;
  }

  /**
   * Makes the delivery streams agree with their work items after `DurableWorkRuntime.recover` (run that
   * first): a `sending` delivery whose work is `unknown` (its send lease expired: a crash mid-send)
   * becomes `delivery.unknown`; an `unknown` delivery whose work an operator resolved gets the same
   * `delivery.resolved`. Never sends anything.
   */
  async recover(): Promise<DeliveryRecoverReport> {
    let unknown = 0;
    let resolved = 0;
    const byStatus = outboxReader(this.options.store).byStatus;
    for (const status of ['sending', 'unknown'] as const) {
      for (let after: string | undefined; ; ) {
        const page = await byStatus.list({
          prefix: deliveryStatusPrefix(status),
          limit: 200,
          ...(after === undefined ? {} : { after }),
        });
        for (const entry of page) {
          const events = await syncDelivery(this.deps.ctx, entry.deliveryId);
          unknown += events.filter((e) => e.type === 'delivery.unknown').length;
          resolved += events.filter((e) => e.type === 'delivery.resolved').length;
        }
        if (page.length < 200) break;
        after = deliveryStatusKey(status, page[page.length - 1]!.deliveryId);
      }
    }
    return { unknown, resolved };
  }

  /**
   * An operator's decision on an unknown delivery: `delivery.resolved` and `work.resolved` in one
   * commit ({@link resolveUnknownDelivery}).
   */
  async resolveUnknown(
    deliveryId: string,
    decision: DeliveryResolution,
    options: ResolveUnknownDeliveryOptions = {},
  ): Promise<void> {
    await resolveUnknownDelivery(this.options.store, deliveryId, decision, { meta: this.deps.ctx.meta, ...options });
  }

  /** The delivery's outbox row, or {@link NotFoundError}. */
  async get(deliveryId: string): Promise<DeliveryView> {
    const view = await outboxReader(this.options.store).get(deliveryId);
    if (!view) throw new NotFoundError('delivery', deliveryId);
    return view;
  }
}
