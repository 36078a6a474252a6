import { createFakeClock, createSeededIdGenerator, propertySettings } from '@demiurge/contracts/testing';
import { propertyStores } from '@demiurge/event-store-postgres/testing';
import { allowedEvents, transitionTable, workLifecycle } from '@demiurge/lifecycle';
import { edgeKey, MachineWalk, steps, type WorkModel, workWalk } from '@demiurge/lifecycle/testing';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { isClaimable, isLeased, leasedKey, type WorkItemView, waitingKey, workItemsProjector } from './index.js';

type Dump = Record<string, Record<string, unknown>>;

/** The read model's invariants, against the walk's own model of each item. */
function checkInvariants(dump: Dump, models: readonly WorkModel[]) {
  const items = (dump.items ?? {}) as Record<string, WorkItemView>;
  const queue = new Set<string>();
  expect(Object.keys(items).length).toBe(models.filter((m) => m.state !== 'none').length);
  for (const m of models) {
    const item = items[m.workId];
    if (m.state === 'none' || !item) {
      expect([m.state, item]).toEqual(['none', undefined]);
      continue;
    }
    expect(item).toMatchObject({ status: m.state, kind: m.kind, attempts: m.claims });
    expect(item.allowed).toEqual(allowedEvents(workLifecycle, item.status));
    expect(item.dueAt).toBe(item.nextAttemptAt ?? item.enqueuedAt);
    for (const time of [item.dueAt, item.leaseUntil, item.nextAttemptAt, item.updatedAt]) {
      if (time !== null) expect(new Date(time).toISOString()).toBe(time);
    }
    if (isLeased(item.status)) {
      expect(item.claimToken).toBe(m.claimToken);
      expect(item.leaseUntil).not.toBeNull();
      queue.add(leasedKey(item.kind, item.leaseUntil!, item.workId));
    } else {
      expect([item.claimToken, item.owner, item.leaseUntil]).toEqual([null, null, null]);
    }
    if (isClaimable(item.status)) {
      queue.add(waitingKey(item.kind, item.dueAt, item.workId));
    } else {
      expect(item.nextAttemptAt).toBeNull();
    }
  }
  // An item has a waiting entry in the queue iff queued/retry_scheduled, a lease entry iff leased, nothing else.
  expect(Object.keys(dump.queue ?? {})).toEqual([...queue].sort());
  expect(Object.keys(dump).sort()).toEqual(Object.keys({ items: 1, ...(queue.size > 0 ? { queue: 1 } : {}) }).sort());
}

// The in-memory store, or PostgreSQL (a fresh database per run) under the `postgres` project of vitest.config.ts.
const stores = await propertyStores();
afterAll(() => stores.close());

const describeOn = stores.skipped ? describe.skip : describe;

describeOn(`work-items projector properties on ${stores.kind}${stores.skipped}`, () => {
  it('equals a rebuild from the log, with exact indexes, after any accepted interleaving of work items', async () => {
    const settings = propertySettings(stores.runs({ memory: 100, postgres: 10 }));
    const taken = new Set<string>();
    await fc.assert(
      fc.asyncProperty(steps(3), fc.nat(), async (walkSteps, checkAt) => {
        const clock = createFakeClock();
        const ids = createSeededIdGenerator(clock, 11);
        const store = await stores.open({ projectors: [workItemsProjector], clock, ids });
        const reader = store.projection('work-items');
        const walk = new MachineWalk(workWalk, ids, 3);
        for (const [i, s] of walkSteps.entries()) {
          clock.advance(s.delay);
          const { streamType, streamId, event, edge } = walk.next(s, clock.now());
          taken.add(edge);
          await store.append({ streamType, streamId, expectedVersion: 'any', events: [event] });
          if (i === checkAt % walkSteps.length) {
            const live = await reader.dump();
            checkInvariants(live, walk.models);
            await store.rebuild();
            expect(await reader.dump()).toEqual(live);
          }
        }
        const live = await reader.dump();
        checkInvariants(live, walk.models);
        await store.rebuild();
        expect(await reader.dump()).toEqual(live);
      }),
      settings,
    );
    // The walks are worth something only if, together, they took every edge of the machine.
    if (settings.numRuns >= 100) {
      const edges = transitionTable(workLifecycle).map((r) => edgeKey(r.from, r.event, r.to));
      expect(edges.filter((e) => !taken.has(e))).toEqual([]);
    }
  });
});
