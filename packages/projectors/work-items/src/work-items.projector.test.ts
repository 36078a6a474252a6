import type { NewEvent } from '@demiurge/contracts';
import { createFakeClock, createSeededIdGenerator } from '@demiurge/contracts/testing';
import { createInMemoryEventStore, createInMemoryLog, defineProjector, type EventStore } from '@demiurge/event-store';
import { describe, expect, it } from 'vitest';
import {
  type ClaimableEntry,
  type LeaseEntry,
  leasedKey,
  leasedPrefix,
  WorkItemCollections,
  type WorkItemView,
  waitingKey,
  waitingPrefix,
  workItemsProjector,
} from './index.js';

function setup() {
  const clock = createFakeClock();
  const ids = createSeededIdGenerator(clock, 7);
  const log = createInMemoryLog();
  const store = createInMemoryEventStore({ projectors: [workItemsProjector], clock, ids, log });
  const reader = store.projection('work-items');
  const at = (ms: number) => new Date(clock.now() + ms).toISOString();
  return { store, ids, clock, log, reader, at };
}

const work = (store: EventStore, workId: string, ...events: NewEvent[]) =>
  store.append({ streamType: 'work', streamId: workId, expectedVersion: 'any', events });

const ids = async (reader: ReturnType<EventStore['projection']>, collection: string) =>
  Object.keys((await reader.dump())[collection] ?? {});

/** The ids of the `queue` entries under `prefix`. */
const queued = async (reader: ReturnType<EventStore['projection']>, prefix = '') =>
  (await ids(reader, 'queue')).filter((id) => id.startsWith(prefix));

describe('work-items projector', () => {
  it('moves an item through the queue (waiting, then leased) on every transition up to unknown', async () => {
    const { store, ids: gen, clock, reader, at } = setup();
    const workId = gen.next('wrk');
    const enqueuedAt = at(0);
    await work(store, workId, {
      type: 'work.enqueued',
      data: { workId, kind: 'delivery.send', subjectId: 'dlv-1', payload: { text: 'hi' } },
    });
    expect(await reader.get<WorkItemView>(WorkItemCollections.items, workId)).toEqual({
      workId,
      kind: 'delivery.send',
      subjectId: 'dlv-1',
      status: 'queued',
      attempts: 0,
      claimToken: null,
      owner: null,
      leaseUntil: null,
      nextAttemptAt: null,
      dueAt: enqueuedAt,
      lastError: null,
      externalRef: null,
      payload: { text: 'hi' },
      enqueuedAt,
      updatedAt: enqueuedAt,
      version: 1,
      allowed: ['work.claimed', 'work.cancelled', 'work.corrupt'],
    });
    expect(await queued(reader)).toEqual([waitingKey('delivery.send', enqueuedAt, workId)]);
    expect(await reader.list<ClaimableEntry>('queue', { prefix: waitingPrefix('delivery.send') })).toEqual([
      { workId, kind: 'delivery.send', dueAt: enqueuedAt },
    ]);
    expect(await queued(reader, leasedPrefix('delivery.send'))).toEqual([]);

    clock.advance(1000);
    const lease1 = at(30_000);
    await work(store, workId, {
      type: 'work.claimed',
      data: { workId, claimToken: 'tok-1', attempt: 1, owner: 'host-a', leaseUntil: lease1 },
    });
    expect(await queued(reader, waitingPrefix('delivery.send'))).toEqual([]);
    expect(await reader.list<LeaseEntry>('queue')).toEqual([
      { workId, kind: 'delivery.send', status: 'claimed', leaseUntil: lease1 },
    ]);
    expect(await reader.get<WorkItemView>('items', workId)).toMatchObject({
      status: 'claimed',
      attempts: 1,
      claimToken: 'tok-1',
      owner: 'host-a',
      leaseUntil: lease1,
      version: 2,
    });

    clock.advance(1000);
    const lease2 = at(30_000);
    await work(store, workId, { type: 'work.heartbeat', data: { workId, claimToken: 'tok-1', leaseUntil: lease2 } });
    expect(await queued(reader)).toEqual([leasedKey('delivery.send', lease2, workId)]);

    await work(store, workId, { type: 'work.running', data: { workId, claimToken: 'tok-1' } });
    expect(await reader.list<LeaseEntry>('queue')).toEqual([
      { workId, kind: 'delivery.send', status: 'running', leaseUntil: lease2 },
    ]);
    await work(store, workId, { type: 'work.sending', data: { workId, claimToken: 'tok-1' } });
    expect(await reader.list<LeaseEntry>('queue')).toMatchObject([{ status: 'sending', leaseUntil: lease2 }]);

    clock.advance(40_000);
    await work(store, workId, { type: 'work.unknown', data: { workId, claimToken: 'tok-1', reason: 'host crashed' } });
    expect(await queued(reader)).toEqual([]);
    expect(await reader.get<WorkItemView>('items', workId)).toMatchObject({
      status: 'unknown',
      claimToken: null,
      owner: null,
      leaseUntil: null,
      attempts: 1,
      allowed: ['work.resolved'],
      updatedAt: at(0),
      version: 6,
    });
  });

  it('puts a failed attempt with retryAt back in the queue at the new due time, and counts attempts', async () => {
    const { store, ids: gen, clock, reader, at } = setup();
    const workId = gen.next('wrk');
    const notBefore = at(5_000);
    await work(store, workId, {
      type: 'work.enqueued',
      data: { workId, kind: 'schedule.fire', subjectId: 'sch-1', notBefore },
    });
    expect(await reader.get<WorkItemView>('items', workId)).toMatchObject({
      nextAttemptAt: notBefore,
      dueAt: notBefore,
    });
    expect(await queued(reader)).toEqual([waitingKey('schedule.fire', notBefore, workId)]);

    clock.advance(5_000);
    await work(store, workId, {
      type: 'work.claimed',
      data: { workId, claimToken: 't1', attempt: 1, owner: 'h', leaseUntil: at(30_000) },
    });
    expect(await reader.get<WorkItemView>('items', workId)).toMatchObject({ nextAttemptAt: null });
    const retryAt = at(60_000);
    await work(store, workId, {
      type: 'work.failed',
      data: { workId, claimToken: 't1', error: { code: 'timeout', message: 'slow' }, retryAt },
    });
    expect(await reader.get<WorkItemView>('items', workId)).toMatchObject({
      status: 'retry_scheduled',
      nextAttemptAt: retryAt,
      dueAt: retryAt,
      lastError: { code: 'timeout', message: 'slow' },
      claimToken: null,
      allowed: ['work.claimed', 'work.cancelled', 'work.corrupt'],
    });
    expect(await queued(reader)).toEqual([waitingKey('schedule.fire', retryAt, workId)]);

    clock.advance(60_000);
    await work(store, workId, {
      type: 'work.claimed',
      data: { workId, claimToken: 't2', attempt: 2, owner: 'h', leaseUntil: at(30_000) },
    });
    await work(store, workId, {
      type: 'work.failed',
      data: { workId, claimToken: 't2', error: { code: 'fatal', message: 'gave up' } },
    });
    expect(await reader.get<WorkItemView>('items', workId)).toMatchObject({
      status: 'failed',
      attempts: 2,
      nextAttemptAt: null,
      lastError: { code: 'fatal', message: 'gave up' },
      allowed: [],
    });
    expect(await reader.dump()).not.toHaveProperty('queue');
  });

  it('normalizes data times to toISOString so index ids sort by time', async () => {
    const { store, ids: gen, reader } = setup();
    const early = gen.next('wrk');
    const late = gen.next('wrk');
    await work(store, late, {
      type: 'work.enqueued',
      data: { workId: late, kind: 'k', subjectId: 's', notBefore: '2026-01-01T00:00:10Z' },
    });
    await work(store, early, {
      type: 'work.enqueued',
      data: { workId: early, kind: 'k', subjectId: 's', notBefore: '2026-01-01T00:00:09.5Z' },
    });
    const due = await reader.list<ClaimableEntry>('queue', { prefix: waitingPrefix('k') });
    expect(due.map((e) => [e.workId, e.dueAt])).toEqual([
      [early, '2026-01-01T00:00:09.500Z'],
      [late, '2026-01-01T00:00:10.000Z'],
    ]);
  });

  it('records the external ref of a success, the lease expiry of a send, and an operator retry', async () => {
    const { store, ids: gen, clock, reader, at } = setup();
    const [a, b] = [gen.next('wrk'), gen.next('wrk')];
    for (const workId of [a, b]) {
      await work(
        store,
        workId,
        { type: 'work.enqueued', data: { workId, kind: 'delivery.send', subjectId: 's' } },
        { type: 'work.claimed', data: { workId, claimToken: 't', attempt: 1, owner: 'h', leaseUntil: at(1000) } },
        { type: 'work.sending', data: { workId, claimToken: 't' } },
      );
    }
    await work(store, a, { type: 'work.succeeded', data: { workId: a, claimToken: 't', externalRef: 'msg-42' } });
    await work(store, a, { type: 'work.acknowledged', data: { workId: a } });
    expect(await reader.get<WorkItemView>('items', a)).toMatchObject({ status: 'acknowledged', externalRef: 'msg-42' });

    clock.advance(2000);
    await work(store, b, { type: 'work.lease_expired', data: { workId: b, claimToken: 't', attempt: 1 } });
    expect(await reader.get<WorkItemView>('items', b)).toMatchObject({ status: 'unknown', allowed: ['work.resolved'] });
    const retryAt = at(10_000);
    await work(store, b, { type: 'work.resolved', data: { workId: b, decision: 'retry', retryAt } });
    expect(await reader.get<WorkItemView>('items', b)).toMatchObject({ status: 'retry_scheduled', dueAt: retryAt });
    expect(await queued(reader)).toEqual([waitingKey('delivery.send', retryAt, b)]);
  });

  it('marks corrupt work with its detail as last error and takes it out of the queue', async () => {
    const { store, ids: gen, reader } = setup();
    const workId = gen.next('wrk');
    await work(store, workId, { type: 'work.enqueued', data: { workId, kind: 'k', subjectId: 's', payload: 3 } });
    await work(store, workId, { type: 'work.corrupt', data: { workId, detail: 'payload is not an object' } });
    expect(await reader.get<WorkItemView>('items', workId)).toMatchObject({
      status: 'corrupt',
      lastError: { code: 'corrupt', message: 'payload is not an object' },
      allowed: [],
    });
    expect(await queued(reader)).toEqual([]);
  });

  it('ignores events the machine refuses and events for items never enqueued', async () => {
    const { store, ids: gen, reader, at } = setup();
    const workId = gen.next('wrk');
    const stranger = gen.next('wrk');
    await work(store, stranger, {
      type: 'work.claimed',
      data: { workId: stranger, claimToken: 't', attempt: 1, owner: 'h', leaseUntil: at(1000) },
    });
    await work(store, workId, { type: 'work.enqueued', data: { workId, kind: 'k', subjectId: 's' } });
    const before = await reader.dump();
    await work(
      store,
      workId,
      { type: 'work.enqueued', data: { workId, kind: 'other', subjectId: 's' } },
      { type: 'work.sending', data: { workId, claimToken: 't' } },
      { type: 'work.resolved', data: { workId, decision: 'sent' } },
    );
    expect(await reader.dump()).toEqual(before);
    await store.rebuild();
    expect(await reader.dump()).toEqual(before);
  });

  it('skips a heartbeat or an outcome naming a stale claim token, live and on rebuild', async () => {
    const { store, ids: gen, reader, at } = setup();
    const workId = gen.next('wrk');
    const claimed = (claimToken: string, attempt: number) => ({
      type: 'work.claimed',
      data: { workId, claimToken, attempt, owner: 'host', leaseUntil: at(30_000) },
    });
    await work(
      store,
      workId,
      { type: 'work.enqueued', data: { workId, kind: 'delivery.send', subjectId: 'dlv-1' } },
      claimed('c1', 1),
      { type: 'work.lease_expired', data: { workId, claimToken: 'c1', attempt: 1 } },
      claimed('c2', 2),
    );
    const before = await reader.dump();
    await work(
      store,
      workId,
      { type: 'work.heartbeat', data: { workId, claimToken: 'c1', leaseUntil: at(3_600_000) } },
      { type: 'work.succeeded', data: { workId, claimToken: 'c1', externalRef: 'late' } },
    );
    expect(await reader.dump()).toEqual(before);
    await store.rebuild();
    expect(await reader.dump()).toEqual(before);
    expect(await reader.get<WorkItemView>(WorkItemCollections.items, workId)).toMatchObject({
      status: 'claimed',
      claimToken: 'c2',
      leaseUntil: at(30_000),
      version: 4,
    });
  });

  it('is rebuilt from the log when its version changes', async () => {
    const { store, ids: gen, log, reader, clock } = setup();
    const workId = gen.next('wrk');
    await work(store, workId, { type: 'work.enqueued', data: { workId, kind: 'k', subjectId: 's' } });
    const live = await reader.dump();
    const bumped = defineProjector({ ...workItemsProjector, version: workItemsProjector.version + 1 });
    log.documents.get('work-items')?.clear();
    const reopened = createInMemoryEventStore({ projectors: [bumped], clock, log });
    expect(await reopened.projection('work-items').dump()).toEqual(live);
    expect(await reopened.projection('work-items').checkpoint()).toMatchObject({
      version: workItemsProjector.version + 1,
      position: 1,
    });
  });
});
