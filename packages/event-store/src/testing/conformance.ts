import type { RecordedEvent } from '@demiurge/contracts';
import { createFakeClock, createSeededIdGenerator } from '@demiurge/contracts/testing';
import { firstValueFrom, take, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  InvalidAppendError,
  StoreClosedError,
  StreamTypeMismatchError,
  StreamVersionConflictError,
} from '../errors.js';
import type { AppendStream, EventStore } from '../event-store.js';
import type { Projector } from '../projector.js';
import { defineProjectionConformance } from './conformance-projections.js';
import { definePropertyConformance } from './conformance-properties.js';
import { counterProjector, notesProjector, testEventRegistry } from './fixtures.js';
import type { EventStoreHarness } from './harness.js';

/** Context shared by the suite's parts: a way to open stores that are closed and disposed after each test. */
export interface ConformanceContext {
  open(
    projectors?: readonly Projector[],
  ): Promise<{ store: EventStore; reopen(p?: readonly Projector[]): Promise<EventStore> }>;
}

/**
 * The event-store conformance suite. Every store runs it through a harness, so they agree on
 * versions, atomicity, idempotency, validation, reads, subscriptions and projections.
 *
 * @example
 * describeEventStoreConformance({ name: 'memory', createStorage: createInMemoryLog,
 *   open: async (log, o) => createInMemoryEventStore({ ...o, log }) });
 */
export function describeEventStoreConformance<S>(harness: EventStoreHarness<S>): void {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const ctx: ConformanceContext = {
    async open(projectors = [counterProjector, notesProjector]) {
      const storage = await harness.createStorage();
      const clock = createFakeClock();
      const ids = createSeededIdGenerator(clock, 7);
      const opened: EventStore[] = [];
      cleanups.push(async () => {
        for (const s of opened) await s.close();
        await harness.disposeStorage?.(storage);
      });
      const openOn = async (p: readonly Projector[]) => {
        const store = await harness.open(storage, { registry: testEventRegistry, projectors: p, clock, ids });
        opened.push(store);
        return store;
      };
      const store = await openOn(projectors);
      return {
        store,
        reopen: async (p = projectors) => {
          await store.close();
          return openOn(p);
        },
      };
    },
  };

  describe(`event store conformance: ${harness.name}`, () => {
    defineAppendConformance(ctx);
    defineReadConformance(ctx);
    defineProjectionConformance(ctx);
    definePropertyConformance(ctx);
  });
}

export const created = (
  streamId: string,
  expectedVersion: AppendStream['expectedVersion'] = 'no_stream',
): AppendStream => ({
  streamType: 'counter',
  streamId,
  expectedVersion,
  events: [{ type: 'test.created', data: { name: streamId } }],
});

export const incremented = (
  streamId: string,
  expectedVersion: AppendStream['expectedVersion'],
  ...by: number[]
): AppendStream => ({
  streamType: 'counter',
  streamId,
  expectedVersion,
  events: by.map((n) => ({ type: 'test.incremented', data: { by: n } })),
});

function defineAppendConformance(ctx: ConformanceContext): void {
  describe('append', () => {
    it('numbers stream versions from 1 and positions globally', async () => {
      const { store } = await ctx.open();
      const a = await store.append(created('a'));
      const b = await store.append([created('b'), incremented('a', 1, 1, 2, 3)]);
      expect(a.events.map((e) => [e.streamId, e.streamVersion, e.position])).toEqual([['a', 1, 1]]);
      expect(b.events.map((e) => [e.streamId, e.streamVersion, e.position])).toEqual([
        ['b', 1, 2],
        ['a', 2, 3],
        ['a', 3, 4],
        ['a', 4, 5],
      ]);
      expect(b.lastPosition).toBe(5);
      expect(b.replayed).toBe(false);
      expect(await store.head()).toBe(5);
      expect(await store.streamVersion('a')).toBe(4);
      expect(await store.streamVersion('missing')).toBe(0);
      const first = a.events[0]!;
      expect(first.eventId).toMatch(/^evt_/);
      expect(first.recordedAt).toBe('2026-01-01T00:00:00.000Z');
      expect(first.meta.actor).toEqual({ kind: 'system', id: 'demiurge' });
      expect(first.schemaVersion).toBe(1);
    });

    it('refuses a wrong expected version with the stream, expected and actual versions', async () => {
      const { store } = await ctx.open();
      await store.append(created('a'));
      const err = await store.append(incremented('a', 5, 1)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StreamVersionConflictError);
      expect(err).toMatchObject({ streamId: 'a', expected: 5, actual: 1, code: 'stream_version_conflict' });
      await expect(store.append(created('a'))).rejects.toMatchObject({ expected: 'no_stream', actual: 1 });
      await expect(store.append(incremented('b', 0, 1))).resolves.toMatchObject({ lastPosition: 2 });
      await expect(store.append(incremented('a', 'any', 1))).resolves.toMatchObject({ lastPosition: 3 });
      expect(await store.head()).toBe(3);
    });

    it('commits several streams atomically: one conflict appends nothing', async () => {
      const { store } = await ctx.open();
      await store.append(created('a'));
      await expect(store.append([created('b'), incremented('a', 7, 1)])).rejects.toBeInstanceOf(
        StreamVersionConflictError,
      );
      expect(await store.head()).toBe(1);
      expect(await store.streamVersion('b')).toBe(0);
      expect(await store.projection('counter').get('streams', 'b')).toBeUndefined();
    });

    it('returns the original events for a replayed idempotency key and appends nothing', async () => {
      const { store } = await ctx.open();
      const first = await store.append([created('a'), incremented('a', 'any', 1)].slice(0, 1), {
        idempotencyKey: 'create-a',
      });
      const multi = await store.append(incremented('a', 1, 1, 2), { idempotencyKey: 'inc-a' });
      const again = await store.append(incremented('a', 1, 1, 2), { idempotencyKey: 'inc-a' });
      const different = await store.append(created('zzz'), { idempotencyKey: 'create-a' });
      expect(again.replayed).toBe(true);
      expect(again.events).toEqual(multi.events);
      expect(different.replayed).toBe(true);
      expect(different.events).toEqual(first.events);
      expect(await store.head()).toBe(3);
      expect(await store.projection('counter').get('streams', 'a')).toEqual({ name: 'a', total: 3, events: 3 });
    });

    it('validates data and meta against the schemas and names what was wrong', async () => {
      const { store } = await ctx.open();
      await expect(store.append(incremented('a', 'any', 1.5))).rejects.toMatchObject({
        name: 'EventValidationError',
        type: 'test.incremented',
        path: ['by'],
      });
      await expect(
        store.append({
          streamType: 'counter',
          streamId: 'a',
          expectedVersion: 'any',
          events: [{ type: 'nope.done', data: {} }],
        }),
      ).rejects.toMatchObject({ name: 'UnknownEventTypeError', type: 'nope.done' });
      await expect(
        store.append(created('a'), { meta: { actor: { kind: 'robot' as 'user', id: 'x' } } }),
      ).rejects.toMatchObject({ name: 'EventValidationError', path: ['meta', 'actor', 'kind'] });
      await expect(store.append({ ...created('a'), events: [] })).rejects.toBeInstanceOf(InvalidAppendError);
      await expect(store.append({ ...created('a'), expectedVersion: -1 })).rejects.toBeInstanceOf(InvalidAppendError);
      await expect(store.append([created('a'), created('a')])).rejects.toBeInstanceOf(InvalidAppendError);
      await expect(store.append(created('a'), { idempotencyKey: 'bad\nkey' })).rejects.toBeInstanceOf(
        InvalidAppendError,
      );
      expect(await store.head()).toBe(0);
    });

    it('keeps a stream id bound to its stream type', async () => {
      const { store } = await ctx.open();
      await store.append(created('a'));
      await expect(store.append({ ...incremented('a', 1, 1), streamType: 'other' })).rejects.toBeInstanceOf(
        StreamTypeMismatchError,
      );
    });

    it('commits concurrent appends independently: one conflict fails only its own caller', async () => {
      const { store } = await ctx.open();
      const racers = await Promise.allSettled(Array.from({ length: 20 }, () => store.append(created('same'))));
      expect(racers.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of racers.filter((r) => r.status === 'rejected')) {
        expect((r as PromiseRejectedResult).reason).toBeInstanceOf(StreamVersionConflictError);
      }
      const many = await Promise.all(Array.from({ length: 50 }, (_, i) => store.append(created(`s${i}`))));
      const positions = many.map((r) => r.lastPosition);
      expect(new Set(positions).size).toBe(50);
      expect(await store.head()).toBe(51);
      expect(await store.projection('counter').list('streams')).toHaveLength(51);
    });

    it('keeps meta: actor, correlation and causation ids', async () => {
      const { store } = await ctx.open();
      const { events } = await store.append(
        { ...created('a'), events: [{ type: 'test.created', data: { name: 'a' }, meta: { causationId: 'evt_x' } }] },
        { meta: { actor: { kind: 'user', id: 'u1' }, correlationId: 'corr-1', turnId: 'trn_1' } },
      );
      expect(events[0]!.meta).toEqual({
        actor: { kind: 'user', id: 'u1' },
        correlationId: 'corr-1',
        causationId: 'evt_x',
        turnId: 'trn_1',
      });
      expect((await store.readStream('a'))[0]!.meta).toEqual(events[0]!.meta);
    });

    it('refuses work after close', async () => {
      const { store } = await ctx.open();
      await store.close();
      await expect(store.append(created('a'))).rejects.toBeInstanceOf(StoreClosedError);
      await expect(store.head()).rejects.toBeInstanceOf(StoreClosedError);
    });
  });
}

function defineReadConformance(ctx: ConformanceContext): void {
  describe('read', () => {
    it('reads a stream, the log from a position, and by type', async () => {
      const { store } = await ctx.open();
      await store.append(created('a'));
      await store.append(created('b'));
      await store.append(incremented('a', 1, 1, 2, 3));
      await store.append({
        streamType: 'note',
        streamId: 'n',
        expectedVersion: 'any',
        events: [{ type: 'test.noted', data: { text: 'hi' } }],
      });
      expect((await store.readStream('a')).map((e) => e.streamVersion)).toEqual([1, 2, 3, 4]);
      expect(
        (await store.readStream('a', { fromVersion: 2, limit: 2 })).map((e) => (e.data as { by: number }).by),
      ).toEqual([1, 2]);
      expect((await store.readAll({ from: 5 })).map((e) => e.position)).toEqual([5, 6]);
      expect((await store.readAll({ from: 2, limit: 2 })).map((e) => e.position)).toEqual([2, 3]);
      expect((await store.readAll({ types: ['test.created', 'test.noted'] })).map((e) => e.position)).toEqual([
        1, 2, 6,
      ]);
      expect(await store.readStream('missing')).toEqual([]);
    });

    it('iterates the whole log in batches in position order', async () => {
      const { store } = await ctx.open();
      for (let i = 0; i < 25; i++) await store.append(created(`s${i}`));
      const seen: number[] = [];
      for await (const event of store.iterate({ batchSize: 4, from: 3 })) seen.push(event.position);
      expect(seen).toEqual(Array.from({ length: 23 }, (_, i) => i + 3));
    });

    it('publishes committed events live and serves catch-up subscriptions without gaps', async () => {
      const { store } = await ctx.open();
      await store.append(created('a'));
      await store.append(created('b'));
      const live = firstValueFrom(store.events$.pipe(take(2), toArray()));
      const caughtUp = firstValueFrom(store.subscribe({ from: 2 }).pipe(take(4), toArray()));
      const typed = firstValueFrom(store.subscribe({ from: 1, types: ['test.incremented'] }).pipe(take(2), toArray()));
      await Promise.all([store.append(incremented('a', 1, 1)), store.append(incremented('b', 1, 2))]);
      await store.append(created('c'));
      const positions = (events: RecordedEvent[]) => events.map((e) => e.position);
      expect(positions(await live)).toEqual([3, 4]);
      expect(positions(await caughtUp)).toEqual([2, 3, 4, 5]);
      expect(positions(await typed)).toEqual([3, 4]);
    });

    it('tells subscribers only after the commit', async () => {
      const { store } = await ctx.open();
      // What each subscriber's read found, in emission order; awaited, so a store whose reads take a round
      // trip (PostgreSQL on a busy machine) is judged on what it read, not on how fast.
      const seenHeads: Promise<number>[] = [];
      const sub = store.events$.subscribe((event) => {
        seenHeads.push(store.readAll({ from: event.position }).then((rows) => rows.length));
      });
      await store.append(incremented('a', 'no_stream', 1, 2));
      await new Promise((r) => setTimeout(r, 20));
      sub.unsubscribe();
      expect(await Promise.all(seenHeads)).toEqual([2, 1]);
    });
  });
}
