import type { NewEvent } from '@demiurge/contracts';
import { createFakeClock, createSeededIdGenerator } from '@demiurge/contracts/testing';
import type { EventStore } from '@demiurge/event-store';
import { propertyStores } from '@demiurge/event-store-postgres/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { type ClaimableEntry, mergeQueueListings, waitingKey, workItemsProjector, workItemsReader } from './index.js';

// The in-memory store, or PostgreSQL (a fresh database per store) under the `postgres` project of vitest.config.ts:
// the kinds are found with `after` past each kind's range, which must hold in both stores' id order.
const stores = await propertyStores();
afterAll(() => stores.close());

async function setup() {
  const clock = createFakeClock(Date.parse('2026-05-01T09:00:00.000Z'));
  const ids = createSeededIdGenerator(clock, 11);
  const store = await stores.open({ projectors: [workItemsProjector], clock, ids });
  return { store, ids, clock, reader: workItemsReader(store) };
}

const work = (store: EventStore, workId: string, ...events: NewEvent[]) =>
  store.append({ streamType: 'work', streamId: workId, expectedVersion: 'any', events });

const at = (second: number) => new Date(Date.parse('2026-05-01T09:00:00.000Z') + second * 1000).toISOString();

describe('workItemsReader over several kinds', () => {
  it('finds every kind, a kind named like a path included, and lists them merged in due order', async () => {
    const { store, ids, reader } = await setup();
    // Kinds whose escaped prefixes sort in interleaving ways: 'a', 'a.b', 'a/b' (escaped 'a%2Fb'), 'b'.
    const plan: [string, number][] = [
      ['b', 1],
      ['a', 4],
      ['a/b', 2],
      ['a.b', 3],
      ['a', 5],
      ['b', 6],
    ];
    const made: string[] = [];
    for (const [kind, second] of plan) {
      const workId = ids.next('wrk');
      made.push(workId);
      await work(store, workId, {
        type: 'work.enqueued',
        data: { workId, kind, subjectId: 's', notBefore: at(second) },
      });
    }
    expect((await reader.kinds()).sort()).toEqual(['a', 'a.b', 'a/b', 'b']);

    const all = await reader.waiting({ limit: 10 });
    expect(all.entries.map((e) => e.dueAt)).toEqual([1, 2, 3, 4, 5, 6].map(at));
    expect(all.cut).toBe(false);
    // One kind alone: its own entries only, 'a' not mixed with 'a/b' or 'a.b'.
    const a = await reader.waiting({ kind: 'a', limit: 10 });
    expect(a.entries.map((e) => e.workId)).toEqual([made[1], made[4]]);
    expect((await reader.waiting({ kind: 'a/b', limit: 10 })).entries.map((e) => e.workId)).toEqual([made[2]]);
    // Paged within a kind: past the key of the last entry seen.
    const next = await reader.waiting({ kind: 'a', limit: 10, after: waitingKey('a', at(4), made[1]!) });
    expect(next.entries.map((e) => e.workId)).toEqual([made[4]]);

    // Cut at 1 per kind: only what no kind's cut list can precede (the first due of all), then cut.
    const first = await reader.waiting({ limit: 1 });
    expect(first.entries.map((e) => e.dueAt)).toEqual([at(1)]);
    expect(first.cut).toBe(true);
    const two = await reader.waiting({ limit: 2 });
    // The first two of all kinds (the merge, 1 to 5, is cut at the limit).
    expect(two.entries.map((e) => e.dueAt)).toEqual([1, 2].map(at));
    expect(two.cut).toBe(true);
  });

  it('lists leases of every kind by lease end, and a claimed item leaves the waiting list', async () => {
    const { store, ids, reader } = await setup();
    const items: [string, string, number][] = [];
    for (const [kind, lease] of [
      ['x', 30],
      ['y', 10],
      ['x', 20],
    ] as const) {
      const workId = ids.next('wrk');
      items.push([workId, kind, lease]);
      await work(
        store,
        workId,
        { type: 'work.enqueued', data: { workId, kind, subjectId: 's' } },
        { type: 'work.claimed', data: { workId, claimToken: 't', attempt: 1, owner: 'h', leaseUntil: at(lease) } },
      );
    }
    expect((await reader.waiting({ limit: 10 })).entries).toEqual([]);
    const leased = await reader.leased({ limit: 10 });
    expect(leased.entries.map((e) => [e.kind, e.leaseUntil])).toEqual([
      ['y', at(10)],
      ['x', at(20)],
      ['x', at(30)],
    ]);
    expect((await reader.leased({ kind: 'x', limit: 1 })).cut).toBe(true);
  });
});

describe('mergeQueueListings', () => {
  const entry = (workId: string, second: number): ClaimableEntry => ({ workId, kind: 'k', dueAt: at(second) });

  it('keeps one list as it is, and stops a merge at the earliest last entry of a full list', () => {
    const one = [entry('w1', 1), entry('w2', 2)];
    expect(mergeQueueListings([one], 2)).toEqual({ entries: one, cut: true });
    expect(mergeQueueListings([one], 3)).toEqual({ entries: one, cut: false });
    // List b is full (2 of 2) and ends at 5: c's 6 and 7 could come after b's unlisted entries, so they go.
    const merged = mergeQueueListings([[entry('a1', 4)], [entry('b1', 1), entry('b2', 5)], [entry('c1', 6)]], 2);
    expect(merged.entries.map((e) => e.workId)).toEqual(['b1', 'a1', 'b2']);
    expect(merged.cut).toBe(true);
    expect(mergeQueueListings([[], [entry('a', 3)]], 2)).toEqual({ entries: [entry('a', 3)], cut: false });
    expect(mergeQueueListings([], 2)).toEqual({ entries: [], cut: false });
  });
});
