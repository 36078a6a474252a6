import { defineProjector, StreamVersionConflictError } from '@demiurge/event-store';
import { testEventRegistry } from '@demiurge/event-store/testing';
import pg from 'pg';
import { filter, firstValueFrom } from 'rxjs';
import { afterEach, expect, it } from 'vitest';
import { openPostgresEventStore, type PostgresEventStore } from '../src/index.js';
import { testServer, untilWaitingForLock } from './test-server.js';

const { server, describePg } = await testServer();
const opened: PostgresEventStore[] = [];
const clients: pg.Client[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  for (const client of clients.splice(0)) await client.end().catch(() => {});
});

/** Counts every event, and each stream's events. */
const totals = (by = 1) =>
  defineProjector({
    name: 'totals',
    version: 1,
    handles: ['test.incremented'],
    apply: (event, tx) => {
      tx.put('totals', 'all', (tx.get<number>('totals', 'all') ?? 0) + by);
      tx.put('streams', event.streamId, (tx.get<number>('streams', event.streamId) ?? 0) + by);
    },
  });

/** The statement texts the process sends while `work` runs. */
async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
    const text = typeof config === 'string' ? config : (config as { text: string }).text;
    seen.push(text.replace(/\s+/g, ' ').trim());
    return (original as (...args: unknown[]) => unknown).call(this, config, ...rest);
  } as typeof original;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = original;
  }
  return seen;
}

/**
 * Round trips on the wire while `work` runs: on each connection, every run of writes that follows data read
 * from the server (or starts the connection's traffic) is one round trip.
 */
async function roundTripsOf(work: () => Promise<unknown>): Promise<number> {
  let trips = 0;
  const lastWasData = new WeakMap<object, boolean>();
  const traced = new WeakSet<object>();
  const undo: (() => void)[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const stream = (this as unknown as { connection: { stream: NodeJS.WritableStream & NodeJS.EventEmitter } })
      .connection.stream;
    if (!traced.has(stream)) {
      traced.add(stream);
      lastWasData.set(stream, true);
      const write = stream.write;
      stream.write = function (this: unknown, ...w: unknown[]) {
        if (lastWasData.get(stream)) trips++;
        lastWasData.set(stream, false);
        return (write as (...a: unknown[]) => boolean).apply(this, w);
      } as typeof stream.write;
      const onData = () => lastWasData.set(stream, true);
      stream.prependListener('data', onData); // before pg's own listener, which may write the next query
      undo.push(() => {
        stream.write = write;
        stream.off('data', onData);
      });
    }
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = original;
    for (const u of undo) u();
  }
  return trips;
}

const loads = (texts: readonly string[]) => texts.filter((t) => /from "?projection_documents"? where/i.test(t)).length;

async function open(url: string, by = 1): Promise<PostgresEventStore> {
  const store = await openPostgresEventStore({ url, registry: testEventRegistry, projectors: [totals(by)] });
  opened.push(store);
  return store;
}

const append = (store: PostgresEventStore, streamId: string, expectedVersion: number | 'any' | 'no_stream' = 'any') =>
  store.append({
    streamType: 'counter',
    streamId,
    expectedVersion,
    events: [{ type: 'test.incremented', data: { by: 1 } }],
  });

describePg('the document cache and the one-statement lock', () => {
  it("a store's next append finds the documents its last commit left in memory: no load, one round trip", async () => {
    const store = await open(await server!.createDatabase());
    await append(store, 'a');
    const sent = await statementsOf(() => append(store, 'a'));
    // Planned from the cache: BEGIN, the one statement that checks the head under the lock and writes, COMMIT.
    expect(sent.map((t) => t.slice(0, 30).toLowerCase())).toEqual([
      'begin',
      'with moved as (update log_head',
      'commit',
    ]);
    // All three in one write (pg's pipeline mode, the socket corked).
    expect(await roundTripsOf(() => append(store, 'a'))).toBe(1);
    expect(await store.projection('totals').get('totals', 'all')).toBe(3);
    expect(await store.projection('totals').get('streams', 'a')).toBe(3);
    // A stream the cache does not know (its head and its document unread): the lock and the heads, the load, the
    // write: three round trips; then it is known.
    expect(await roundTripsOf(() => append(store, 'new'))).toBe(3);
    expect(await roundTripsOf(() => append(store, 'new'))).toBe(1);
    expect((await store.readStream('new')).map((e) => e.streamVersion)).toEqual([1, 2]);
  });

  it("another host's appends in between: the documents are loaded again, and the read model counts every event", async () => {
    const url = await server!.createDatabase();
    const [a, b] = [await open(url), await open(url)];
    await append(a, 'x');
    await append(a, 'x'); // a's cache knows "x": its next append would be planned from the cache
    const seenByA = firstValueFrom(a.events$.pipe(filter((e) => e.position === 3)));
    await append(b, 'x');
    await seenByA; // b's commit was notified to a
    const sent = await statementsOf(() => append(a, 'x'));
    // The notification of a later head told a that its cache is stale: no planned statement (it would write
    // nothing), the lock first, then the loads.
    expect(sent[1]).toMatch(/^SELECT h\.position/);
    expect(sent.some((t) => /^WITH moved/.test(t))).toBe(false);
    expect(loads(sent)).toBeGreaterThan(0);
    for (let i = 0; i < 10; i++) await append(i % 3 === 0 ? b : a, 'x');
    expect(await a.projection('totals').get('totals', 'all')).toBe(14);
    expect(await a.projection('totals').get('streams', 'x')).toBe(14);
  });

  it("another host's rebuild in between (the head does not move): the cache is dropped", async () => {
    const url = await server!.createDatabase();
    const a = await open(url);
    for (let i = 0; i < 3; i++) await append(a, 's');
    // A host whose projector counts tens rebuilds the same projector: documents change, the head stays at 3.
    const b = await open(url, 10);
    await b.rebuild();
    expect(await a.projection('totals').get('totals', 'all')).toBe(30);
    await append(a, 's');
    // From the rebuilt 30, not from the 3 a's last commit left.
    expect(await a.projection('totals').get('totals', 'all')).toBe(31);
  });

  it('an append that waited for the lock reads the stream heads again, after it', async () => {
    const url = await server!.createDatabase();
    const store = await open(url);
    await append(store, 'other');
    // Another writer holds the lock and writes stream "w" version 1 behind the store's back, then commits.
    const writer = new pg.Client({ connectionString: url });
    clients.push(writer);
    await writer.connect();
    await writer.query('BEGIN');
    await writer.query('SELECT position FROM log_head FOR UPDATE');
    const waiting = append(store, 'w', 'no_stream').then(
      () => 'appended',
      (err: unknown) => err,
    );
    await untilWaitingForLock(url);
    await writer.query(
      `INSERT INTO events (position, event_id, stream_type, stream_id, stream_version, type, schema_version, data, meta,
        recorded_at) SELECT 2, 'evt_behind', 'counter', 'w', 1, type, schema_version, data, meta, recorded_at
        FROM events WHERE position = 1`,
    );
    await writer.query('UPDATE log_head SET position = 2');
    await writer.query('COMMIT');
    // The heads read with the lock (before the wait) said "w" does not exist; read again after it, it does.
    expect(await waiting).toBeInstanceOf(StreamVersionConflictError);
    expect(await store.head()).toBe(2);
  });

  it('an append planned from the cache writes nothing when another writer committed first, and is appended after it', async () => {
    const url = await server!.createDatabase();
    const store = await open(url);
    await append(store, 'a');
    await append(store, 'a'); // the cache knows stream "a" and the documents: the next append is planned from it
    // Another writer (no NOTIFY: the store cannot know) holds the lock while the planned append is in flight, writes
    // "a" version 3, moves the head and commits. The planned statement, granted the lock after it, must see that.
    const writer = new pg.Client({ connectionString: url });
    clients.push(writer);
    await writer.connect();
    await writer.query('BEGIN');
    await writer.query('SELECT position FROM log_head FOR UPDATE');
    const sent: string[] = [];
    const waiting = statementsOf(() => append(store, 'a')).then((texts) => sent.push(...texts));
    await untilWaitingForLock(url);
    await writer.query(
      `INSERT INTO events (position, event_id, stream_type, stream_id, stream_version, type, schema_version, data, meta,
        recorded_at) SELECT 3, 'evt_behind', 'counter', 'a', 3, type, schema_version, data, meta, recorded_at
        FROM events WHERE position = 1`,
    );
    await writer.query('UPDATE log_head SET position = 3');
    await writer.query('COMMIT');
    await waiting;
    // The planned transaction (BEGIN, the guarded statement, COMMIT) wrote nothing; the append then ran under the
    // lock: version 4 at position 4, and the projection caught up with the other writer's event first.
    expect(sent[1]).toMatch(/^WITH moved AS \(UPDATE log_head/);
    expect(sent.filter((t) => /^begin$/i.test(t))).toHaveLength(2);
    expect((await store.readStream('a')).map((e) => [e.position, e.streamVersion])).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 4],
    ]);
    expect(await store.projection('totals').get('totals', 'all')).toBe(4);
    // An expected version the cache would have allowed is refused once the lock shows the stream moved.
    await writer.query('BEGIN');
    await writer.query(
      `INSERT INTO events (position, event_id, stream_type, stream_id, stream_version, type, schema_version, data, meta,
        recorded_at) SELECT 5, 'evt_behind2', 'counter', 'a', 5, type, schema_version, data, meta, recorded_at
        FROM events WHERE position = 1`,
    );
    await writer.query('UPDATE log_head SET position = 5');
    await writer.query('COMMIT');
    await expect(append(store, 'a', 4)).rejects.toBeInstanceOf(StreamVersionConflictError);
    expect(await store.head()).toBe(5);
  });
});
