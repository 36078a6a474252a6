import { type DecidedAppend, defineProjector, InvalidAppendError } from '@demiurge/event-store';
import { testEventRegistry } from '@demiurge/event-store/testing';
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { openPostgresEventStore, type PostgresEventStore } from '../src/index.js';
import { testServer, untilWaitingForLock } from './test-server.js';

const { server, describePg } = await testServer();
const opened: PostgresEventStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

// A queue: `test.created` opens an item (indexed in `open`), `test.noted` takes it (out of the index).
const queue = defineProjector({
  name: 'queue',
  version: 1,
  handles: ['test.created', 'test.noted'],
  apply: (event, tx) => {
    if (event.type === 'test.created') {
      tx.put('items', event.streamId, { id: event.streamId, taken: false });
      tx.put('open', event.streamId, { id: event.streamId });
    } else {
      tx.put('items', event.streamId, { id: event.streamId, taken: true });
      tx.delete('open', event.streamId);
    }
  },
});

const open = (url: string) =>
  openPostgresEventStore({ url, registry: testEventRegistry, projectors: [queue] }).then((s) => {
    opened.push(s);
    return s;
  });

/** Takes the first open item no earlier append of the transaction wrote: the item's id, or undefined. */
const takeOne = (by: string): DecidedAppend<string | undefined> => ({
  listings: [{ projector: 'queue', collection: 'open', limit: 2, streamField: 'id', joinCollection: 'items' }],
  decide: ([listed], taken) => {
    const entry = listed!.find((e) => !taken.has(e.streamId!) && !(e.joined as { taken: boolean }).taken);
    if (!entry) return { streams: [], result: undefined };
    return {
      streams: [
        {
          streamType: 'test',
          streamId: entry.streamId!,
          expectedVersion: entry.streamVersion!,
          events: [{ type: 'test.noted', data: { text: by } }],
        },
      ],
      result: entry.streamId,
    };
  },
});

/** Creates one `test` stream per id (a `test.created` each): the items the queue lists. */
async function createItems(store: PostgresEventStore, ids: readonly string[]): Promise<void> {
  for (const id of ids) {
    await store.append({
      streamType: 'test',
      streamId: id,
      expectedVersion: 'no_stream',
      events: [{ type: 'test.created', data: { name: id } }],
    });
  }
}

/** Every statement the process sends while `work` runs. */
async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
    seen.push(typeof config === 'string' ? config : (config as { text: string }).text);
    return (original as (...args: unknown[]) => unknown).call(this, config, ...rest);
  } as typeof original;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = original;
  }
  return seen;
}

describePg('appends decided under the log-head lock', () => {
  it('two hosts with six deciders each take every item exactly once, and never lose a race', async () => {
    const url = await server!.createDatabase();
    const a = await open(url);
    const b = await open(url);
    const items = Array.from({ length: 60 }, (_, i) => `item-${String(i).padStart(2, '0')}`);
    for (const id of items) {
      await a.append({
        streamType: 'test',
        streamId: id,
        expectedVersion: 'no_stream',
        events: [{ type: 'test.created', data: { name: id } }],
      });
    }
    const takenBy = new Map<string, string[]>();
    const decider = async (store: PostgresEventStore, name: string) => {
      for (;;) {
        const { result, appended } = await store.appendDecided!(takeOne(name));
        if (result === undefined) return;
        expect(appended?.events.map((e) => e.streamId)).toEqual([result]);
        takenBy.set(result, [...(takenBy.get(result) ?? []), name]);
      }
    };
    // A rejection (a version conflict: a lost race) fails the test.
    await Promise.all([
      ...Array.from({ length: 6 }, (_, i) => decider(a, `a${i}`)),
      ...Array.from({ length: 6 }, (_, i) => decider(b, `b${i}`)),
    ]);
    expect([...takenBy.keys()].sort()).toEqual(items);
    expect([...takenBy.values()].filter((by) => by.length !== 1)).toEqual([]);
    // Both hosts took some (the other host's commits are seen under the lock, not raced).
    const byHost = (h: string) => [...takenBy.values()].filter(([by]) => by!.startsWith(h)).length;
    expect(byHost('a')).toBeGreaterThan(0);
    expect(byHost('b')).toBeGreaterThan(0);
    for (const id of items) expect(await a.streamVersion(id)).toBe(2);
    expect(await b.projection('queue').list('open')).toEqual([]);
    expect((await a.verifyChain()).ok).toBe(true);
  });

  it('costs no round trip of its own: BEGIN with the lock and the listing, then the write with COMMIT', async () => {
    const store = await open(await server!.createDatabase());
    await createItems(store, ['x', 'y']);
    const sent = await statementsOf(() => store.appendDecided!(takeOne('me')));
    expect(sent.map((s) => s.trim().slice(0, 6).toUpperCase())).toEqual(['BEGIN', 'SELECT', 'WITH I', 'COMMIT']);
    expect(await store.projection('queue').list('open')).toEqual([{ id: 'y' }]);
  });

  it('one that waited for the lock reads its listings and heads again in one statement, and decides on them', async () => {
    const url = await server!.createDatabase();
    const store = await open(url);
    await createItems(store, ['x', 'y']);
    // Another writer holds the lock while the decided append waits, takes "x" behind the store's back (its item
    // out of the index, a test.noted event) and commits: the listing read before the wait is stale.
    const writer = new pg.Client({ connectionString: url });
    await writer.connect();
    // The writer's own statements bypass the counting (it patches the prototype while the append runs).
    const query = pg.Client.prototype.query;
    const w = (text: string) => (query as (t: string) => Promise<unknown>).call(writer, text);
    try {
      await w('BEGIN');
      await w('SELECT position FROM log_head FOR UPDATE');
      const sent: string[] = [];
      const decided = statementsOf(() => store.appendDecided!(takeOne('me'))).then((texts) => sent.push(...texts));
      await untilWaitingForLock(url);
      await w(
        `INSERT INTO events (position, event_id, stream_type, stream_id, stream_version, type, schema_version, data,
          meta, recorded_at) SELECT 3, 'evt_behind', 'test', 'x', 2, 'test.noted', 1, '{"text":"other"}', meta,
          recorded_at FROM events WHERE position = 1`,
      );
      await w(`UPDATE projection_documents SET doc = '{"id":"x","taken":true}'
        WHERE projector = 'queue' AND collection = 'items' AND id = 'x'`);
      await w(`DELETE FROM projection_documents WHERE projector = 'queue' AND collection = 'open' AND id = 'x'`);
      await w('UPDATE log_head SET position = 3');
      await w(`UPDATE projector_checkpoints SET position = 3 WHERE name = 'queue'`);
      await w('COMMIT');
      await decided;
      // BEGIN with the locking statement; after the wait one read of the checkpoints, heads and listings; the write
      // with COMMIT (before: the listings in a statement of their own, one more round trip).
      expect(sent.map((t) => t.trim().slice(0, 6).toUpperCase())).toEqual([
        'BEGIN',
        'SELECT',
        'SELECT',
        'WITH I',
        'COMMIT',
      ]);
      expect(sent[2]).toMatch(/AS lowest.*AS heads.*AS listed/s);
      // It took "y": "x" was taken by the other writer, as the read after the lock showed.
      expect((await store.readStream('y')).map((e) => e.type)).toEqual(['test.created', 'test.noted']);
      expect((await store.readStream('x')).map((e) => e.position)).toEqual([1, 3]);
    } finally {
      await writer.end();
    }
  });

  it('refuses an idempotency key; a decision that throws fails alone, the others in its transaction commit', async () => {
    const store = await open(await server!.createDatabase());
    for (const id of ['p', 'q']) {
      await store.append({
        streamType: 'test',
        streamId: id,
        expectedVersion: 'no_stream',
        events: [{ type: 'test.created', data: { name: id } }],
      });
    }
    await expect(store.appendDecided!({ ...takeOne('k'), options: { idempotencyKey: 'k1' } })).rejects.toThrow(
      InvalidAppendError,
    );
    const failing: DecidedAppend<never> = {
      listings: [],
      decide: () => {
        throw new Error('cannot decide');
      },
    };
    const [first, bad, second, none] = await Promise.allSettled([
      store.appendDecided!(takeOne('1')),
      store.appendDecided!(failing),
      store.appendDecided!(takeOne('2')),
      store.appendDecided!(takeOne('3')),
    ]);
    expect(first).toMatchObject({ status: 'fulfilled', value: { result: 'p' } });
    expect(bad).toMatchObject({ status: 'rejected', reason: { message: 'cannot decide' } });
    // The second decider skipped what the first took in the same transaction.
    expect(second).toMatchObject({ status: 'fulfilled', value: { result: 'q' } });
    expect(none).toMatchObject({ status: 'fulfilled', value: { result: undefined, appended: undefined } });
  });
});

// Projectors that read before they write: the item itself (the listing's join) and another projector's view of it.
const readingQueue = defineProjector({
  name: 'queue',
  version: 1,
  handles: ['test.created', 'test.noted'],
  apply: (event, tx) => {
    const item = tx.get<{ notes: number }>('items', event.streamId);
    tx.put('items', event.streamId, { id: event.streamId, notes: (item?.notes ?? -1) + 1 });
    if (event.type === 'test.created') tx.put('open', event.streamId, { id: event.streamId });
    else tx.delete('open', event.streamId);
  },
});
const views = defineProjector({
  name: 'views',
  version: 1,
  handles: ['test.created', 'test.noted'],
  apply: (event, tx) => {
    const view = tx.get<{ seen: number }>('by-item', `item/${event.streamId}`);
    tx.put('by-item', `item/${event.streamId}`, { seen: (view?.seen ?? 0) + 1 });
  },
});

describePg('the documents a decided append reads with its listing', () => {
  it('hands the joined item and the alsoRead views to the projectors: nothing cached, still no load', async () => {
    const url = await server!.createDatabase();
    // No document cache: every document a projector reads is loaded, unless the listing read it under the lock.
    const store = await openPostgresEventStore({
      url,
      registry: testEventRegistry,
      projectors: [readingQueue, views],
      cachedDocuments: 0,
    });
    opened.push(store);
    await createItems(store, ['x', 'y']);
    const take = takeOne('me');
    const hinted: DecidedAppend<string | undefined> = {
      ...take,
      listings: take.listings.map((l) => ({
        ...l,
        alsoRead: [{ projector: 'views', collection: 'by-item', idPrefix: 'item/' }],
      })),
    };
    const sent = await statementsOf(() => store.appendDecided!(hinted));
    expect(sent.map((s) => s.trim().slice(0, 6).toUpperCase())).toEqual(['BEGIN', 'SELECT', 'WITH I', 'COMMIT']);
    // Without the hint, the view is loaded in a round trip of its own under the lock.
    const unhinted = await statementsOf(() => store.appendDecided!(takeOne('me')));
    expect(unhinted.map((s) => s.trim().slice(0, 6).toUpperCase())).toEqual([
      'BEGIN',
      'SELECT',
      'SELECT',
      'WITH I',
      'COMMIT',
    ]);
    // And the projectors read what was there: each item noted once after its creation, each view seen twice.
    const queueReader = store.projection('queue');
    expect(await queueReader.get('items', 'x')).toEqual({ id: 'x', notes: 1 });
    expect(await queueReader.get('items', 'y')).toEqual({ id: 'y', notes: 1 });
    expect(await store.projection('views').list('by-item')).toEqual([{ seen: 2 }, { seen: 2 }]);
  });
});
