import { type Clock, createIdGenerator, type EventMeta, type IdGenerator, systemClock } from '@demiurge/contracts';
import {
  DurableWorkRuntime,
  HostWorkLifecycleRuntime,
  loadWork,
  NotFoundError,
  RuntimeControlPlane,
} from '@demiurge/control-plane';
import { deliveryOfWork, resolveUnknownDelivery } from '@demiurge/delivery';
import type { EventStore } from '@demiurge/event-store';
import { outboxReader } from '@demiurge/projector-outbox';
import { RunRuntime } from '@demiurge/sessions';

/** Who an admin surface's writes are recorded as by default (the run and work owner, the event actor). */
export const ADMIN_OWNER = 'cli';

/** The runtimes an admin command uses on one store (no engine, no loops): tasks, work, runs, the status view. */
export interface AdminRuntime<S extends EventStore = EventStore> {
  readonly store: S;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly work: DurableWorkRuntime;
  readonly controlPlane: RuntimeControlPlane;
  readonly host: HostWorkLifecycleRuntime;
  readonly runs: RunRuntime;
  /**
   * An operator's decision on unknown work. A delivery's send is resolved with its delivery, in one commit
   * (`delivery.resolved` + `work.resolved`), so the outbox says so at once, not at the next host start.
   */
  resolveUnknownWork(
    workId: string,
    decision: 'sent' | 'failed' | 'retry',
    options?: { note?: string; retryAt?: string },
  ): Promise<void>;
}

/**
 * The admin side of the composition root: the control plane and the run runtime wired on an open store,
 * acting as the operator `owner` (default {@link ADMIN_OWNER}). The CLI's admin commands (`tasks cancel`,
 * `work resolve`, `runs resume`, `status`) use it; a serving host uses {@link createRuntime}.
 * @example
 * const admin = createAdminRuntime(store);
 * await admin.controlPlane.cancelTask(ref, 'no longer needed');
 */
export function createAdminRuntime<S extends EventStore>(
  store: S,
  options: { clock?: Clock; owner?: string } = {},
): AdminRuntime<S> {
  const clock = options.clock ?? systemClock;
  const owner = options.owner ?? ADMIN_OWNER;
  const ids = createIdGenerator(clock);
  const meta = { actor: { kind: 'operator' as const, id: owner } };
  const work = new DurableWorkRuntime({ store, clock, ids, owner, meta });
  const controlPlane = new RuntimeControlPlane({ store, clock, ids, work, meta });
  const host = new HostWorkLifecycleRuntime({ store, clock, ids, work });
  const runs = new RunRuntime({ store, clock, ids, owner, controlPlane, meta });
  const resolveUnknownWork: AdminRuntime['resolveUnknownWork'] = (workId, decision, opts = {}) =>
    resolveWork(store, work, workId, decision, { ...opts, meta });
  return { store, clock, ids, work, controlPlane, host, runs, resolveUnknownWork };
}

/**
 * An operator's decision on unknown work ({@link AdminRuntime.resolveUnknownWork}): a send whose delivery is in
 * the outbox is resolved with its delivery in one commit; any other work item (or a send enqueued alone) alone.
 */
export async function resolveWork(
  store: EventStore,
  work: DurableWorkRuntime,
  workId: string,
  decision: 'sent' | 'failed' | 'retry',
  options: { note?: string; retryAt?: string; meta?: Partial<EventMeta> } = {},
): Promise<void> {
  const item = await loadWork(store, workId);
  if (item.state === 'none') throw new NotFoundError('work item', workId);
  const deliveryId = deliveryOfWork({ kind: item.kind ?? '', payload: item.payload });
  if (deliveryId && (await outboxReader(store).get(deliveryId))) {
    await resolveUnknownDelivery(store, deliveryId, decision, options);
  } else {
    const { meta: _meta, ...rest } = options;
    await work.resolveUnknown(workId, decision, rest);
  }
}
