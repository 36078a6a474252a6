import { Socket } from 'node:net';
import { defineProjector, ProjectorFailedError, StreamVersionConflictError } from '@demiurge/event-store';
import { testEventRegistry } from '@demiurge/event-store/testing';
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { openPostgresEventStore, type PostgresEventStore } from '../src/index.js';
import { testServer } from './test-server.js';

const { server, describePg } = await testServer();
const opened: PostgresEventStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

// Two projectors that each read a document before writing, and one whose second read depends on its first.
const totals = defineProjector({
  name: 'totals',
  version: 1,
  handles: ['test.incremented'],
  apply: (_event, tx) => tx.put('totals', 'all', (tx.get<number>('totals', 'all') ?? 0) + 1),
});
const perStream = defineProjector({
  name: 'per-stream',
  version: 1,
  handles: ['test.incremented'],
  apply: (event, tx) => {
    tx.put('streams', event.streamId, (tx.get<number>('streams', event.streamId) ?? 0) + 1);
    tx.delete('gone', event.streamId);
  },
});
const chained = defineProjector({
  name: 'chained',
  version: 1,
  handles: ['test.incremented'],
  apply: (event, tx) => {
    const pointer = tx.get<string>('pointers', event.streamId) ?? `target-${event.streamId}`;
    tx.put('targets', pointer, (tx.get<number>('targets', pointer) ?? 0) + 1);
    tx.put('pointers', event.streamId, pointer);
  },
});

/** Every statement the process sends while `work` runs: its text, and whether it went as a named statement. */
async function statementsOf(work: () => Promise<unknown>): Promise<{ text: string; named: boolean }[]> {
  const seen: { text: string; named: boolean }[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
    const named = typeof config === 'object' && config !== null && 'name' in config;
    const text = typeof config === 'string' ? config : (config as { text: string }).text;
    seen.push({ text: text.replace(/\s+/g, ' ').trim(), named });
    return (original as (...args: unknown[]) => unknown).call(this, config, ...rest);
  } as typeof original;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = original;
  }
  return seen;
}

/** The writes the process hands to its sockets' kernel buffers while `work` runs (one system call each). */
async function socketWritesOf(work: () => Promise<unknown>): Promise<number> {
  let writes = 0;
  const proto = Socket.prototype as unknown as Record<'_write' | '_writev', (...args: unknown[]) => unknown>;
  const original = { _write: proto._write, _writev: proto._writev };
  for (const name of ['_write', '_writev'] as const) {
    proto[name] = function (this: Socket, ...args: unknown[]) {
      writes++;
      return original[name].apply(this, args);
    };
  }
  try {
    await work();
  } finally {
    Object.assign(proto, original);
  }
  return writes;
}

const append = (store: PostgresEventStore, streamId: string) =>
  store.append({
    streamType: 'counter',
    streamId,
    expectedVersion: 'any',
    events: [{ type: 'test.incremented', data: { by: 1 } }],
  });

describePg('round trips of an append', () => {
  it('loads the documents every projector misses together, and sends the writes with the events in one statement', async () => {
    const store = await openPostgresEventStore({
      url: await server!.createDatabase(),
      registry: testEventRegistry,
      projectors: [totals, perStream, chained],
      cachedDocuments: 0, // every document is loaded (the cache has its own tests)
    });
    opened.push(store);
    await append(store, 'a');
    const sent = await statementsOf(() => append(store, 'a'));
    const texts = sent.map((s) => s.text.slice(0, 60).toLowerCase());
    // BEGIN with the head lock and the stream heads (sent together), one load of the three projectors' first
    // reads, one load of the chained projector's dependent read, the one statement of events + documents + head
    // + NOTIFY with COMMIT (sent together).
    expect(texts).toHaveLength(6);
    expect(texts[0]).toBe('begin');
    expect(texts[1]).toMatch(/^select h.position/);
    expect(sent[1]!.text).toContain('FOR UPDATE');
    expect(texts[5]).toBe('commit');
    expect(sent[4]!.text).toMatch(/^WITH inserted AS .* put AS \(INSERT INTO projection_documents/);
    // Every statement with parameters is prepared once per connection (sent named).
    for (const s of sent.slice(1, 5)) expect(s.named, s.text).toBe(true);
    expect(await store.projection('totals').get('totals', 'all')).toBe(2);
    expect(await store.projection('per-stream').get('streams', 'a')).toBe(2);
    expect(await store.projection('chained').get('targets', 'target-a')).toBe(2);
    expect(await store.projection('chained').get('pointers', 'a')).toBe('target-a');
  });

  it('sends BEGIN with its locking statement, and the last statement with COMMIT, in one write each', async () => {
    const store = await openPostgresEventStore({
      url: await server!.createDatabase(),
      registry: testEventRegistry,
      projectors: [totals],
    });
    opened.push(store);
    await append(store, 'a');
    // A stream the store has not written: the lock and its head first (BEGIN with the locking statement), then the
    // last statement with COMMIT: two writes, not four.
    const statements = await statementsOf(async () => {
      expect(await socketWritesOf(() => append(store, 'b'))).toBe(2);
    });
    expect(statements.map((s) => s.text.slice(0, 6).toLowerCase())).toEqual(['begin', 'select', 'with i', 'commit']);
    // A stream it knows, planned from the cache: BEGIN, the guarded statement and COMMIT in one write.
    expect(await socketWritesOf(() => append(store, 'b'))).toBe(1);
    expect(await store.projection('totals').get('totals', 'all')).toBe(3);
  });

  it('without prepared statements the same appends give the same projections', async () => {
    const url = await server!.createDatabase();
    const store = await openPostgresEventStore({
      url,
      registry: testEventRegistry,
      projectors: [totals, perStream, chained],
      preparedStatements: false,
    });
    opened.push(store);
    await append(store, 'a');
    const sent = await statementsOf(() => append(store, 'b'));
    expect(sent.some((s) => s.named)).toBe(false);
    expect(await store.projection('totals').get('totals', 'all')).toBe(2);
    expect(await store.projection('per-stream').dump()).toEqual({ streams: { a: 1, b: 1 } });
    const rebuilt = await store.rebuild();
    expect(rebuilt.eventsApplied).toBe(2);
    expect(await store.projection('chained').dump()).toEqual({
      pointers: { a: 'target-a', b: 'target-b' },
      targets: { 'target-a': 1, 'target-b': 1 },
    });
  });

  it('appends in flight share one transaction; a refused one and one whose projector throws fail alone', async () => {
    const picky = defineProjector({
      name: 'picky',
      version: 1,
      handles: ['test.incremented'],
      apply: (event, tx) => {
        if ((event.data as { by: number }).by === 13) throw new Error('13 is unlucky');
        tx.put('seen', event.streamId, event.streamVersion);
      },
    });
    const store = await openPostgresEventStore({
      url: await server!.createDatabase(),
      registry: testEventRegistry,
      projectors: [totals, picky],
    });
    opened.push(store);
    const one = (streamId: string, by: number, expectedVersion: number | 'any' = 'any') =>
      store.append({
        streamType: 'counter',
        streamId,
        expectedVersion,
        events: [{ type: 'test.incremented', data: { by } }],
      });
    let outcomes: PromiseSettledResult<unknown>[] = [];
    const sent = await statementsOf(async () => {
      outcomes = await Promise.allSettled([
        ...Array.from({ length: 10 }, (_, i) => one(`s${i}`, 1)),
        one('s0', 1, 5), // s0 is at 0 or 1 when it runs, never 5
        one('t', 13),
        ...Array.from({ length: 10 }, (_, i) => one(`u${i}`, 2)),
      ]);
    });
    const failed = outcomes.flatMap((o, i) => (o.status === 'rejected' ? [[i, o.reason] as const] : []));
    expect(failed.map(([i]) => i)).toEqual([10, 11]);
    expect(failed[0]![1]).toBeInstanceOf(StreamVersionConflictError);
    expect(failed[1]![1]).toBeInstanceOf(ProjectorFailedError);
    // 20 appends committed in fewer transactions than appends (the first may go alone, the rest together, and
    // the group with the throwing projector is retried one by one).
    const commits = sent.filter((s) => /^commit$/i.test(s.text)).length;
    expect(commits).toBeLessThan(20 + 2);
    expect(await store.head()).toBe(20);
    const all = await store.readAll();
    expect(all.map((e) => e.position)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(await store.projection('totals').get('totals', 'all')).toBe(20);
    expect((await store.verifyChain()).ok).toBe(true);
  });

  it('thirty appends in flight commit together: at most two commits', async () => {
    const store = await openPostgresEventStore({
      url: await server!.createDatabase(),
      registry: testEventRegistry,
      projectors: [totals],
    });
    opened.push(store);
    const sent = await statementsOf(() =>
      Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          store.append({
            streamType: 'counter',
            streamId: `s${i}`,
            expectedVersion: 'no_stream',
            events: [{ type: 'test.incremented', data: { by: 1 } }],
          }),
        ),
      ),
    );
    expect(sent.filter((s) => /^commit$/i.test(s.text)).length).toBeLessThanOrEqual(2);
    expect(await store.projection('totals').get('totals', 'all')).toBe(30);
  });
});
