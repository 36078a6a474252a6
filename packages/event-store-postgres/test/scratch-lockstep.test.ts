import type { RecordedEvent } from '@demiurge/contracts';
import { counterProjector, testEventRegistry } from '@demiurge/event-store/testing';
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import {
  createScratchSchema,
  openPostgresEventStore,
  type PostgresEventStore,
  StoreUnavailableError,
} from '../src/index.js';
import { testServer } from './test-server.js';

// What the simulator needs of the store (docs/testing.md): a fresh schema per scenario in one database, and a
// lockstep store whose statements answer in call order.
const { server, describePg } = await testServer();
const opened: PostgresEventStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

async function open(url: string, lockstep = false): Promise<PostgresEventStore> {
  const store = await openPostgresEventStore({
    url,
    registry: testEventRegistry,
    projectors: [counterProjector],
    lockstep,
  });
  opened.push(store);
  return store;
}

const bump = (store: PostgresEventStore, streamId: string) =>
  store.append({
    streamType: 'counter',
    streamId,
    expectedVersion: 'any',
    events: [{ type: 'test.incremented', data: { by: 1 } }],
  });

async function query<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

describePg('scratch schemas and the lockstep store', () => {
  it('two scratch schemas of one database hold separate logs; a reopen finds its own; drop removes it all', async () => {
    const url = await server!.createDatabase();
    const a = await createScratchSchema(url, 'demiurge_sim');
    const b = await createScratchSchema(url, 'demiurge_sim');
    expect(a.name).not.toBe(b.name);
    await bump(await open(a.url), 's1');
    await bump(await open(a.url), 's1');
    await bump(await open(b.url), 's2');
    for (const store of opened.splice(0)) await store.close();
    const again = await open(a.url);
    expect((await again.readAll()).map((e) => e.streamId)).toEqual(['s1', 's1']);
    expect(await (await open(b.url)).head()).toBe(1);
    // Nothing landed in the database's own schema.
    expect(await query(url, "SELECT 1 FROM pg_tables WHERE schemaname = 'public'")).toEqual([]);
    for (const store of opened.splice(0)) await store.close();
    await a.drop();
    await b.drop();
    expect(await query(url, "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'demiurge_sim_%'")).toEqual([]);
  });

  it('a user who may not create schemas gets one line naming the server and why', async () => {
    const url = await server!.createDatabase();
    const role = `demiurge_noschema_${process.pid}`;
    await query(url, `DROP ROLE IF EXISTS ${role}`);
    await query(url, `CREATE ROLE ${role} LOGIN PASSWORD 'pw'`);
    try {
      const as = new URL(url);
      as.username = role;
      as.password = 'pw';
      const err = await createScratchSchema(as.toString()).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreUnavailableError);
      expect((err as Error).message).toMatch(
        new RegExp(
          `^cannot open the event store at postgres://${role}@[^ ]+: CREATE SCHEMA demiurge_scratch_\\S+: permission denied for database`,
        ),
      );
      expect((err as Error).message).not.toContain(':pw@');
    } finally {
      await query(url, `DROP ROLE IF EXISTS ${role}`);
    }
  });

  it('a lockstep store answers in an order that depends on the calls alone, counts what is in flight, and publishes another store’s commits before its own next one', async () => {
    // Twelve calls at once, reads and appends mixed, on two fresh lockstep stores: the same order of answers.
    const answers = async (store: PostgresEventStore) => {
      const order: string[] = [];
      const calls: Promise<unknown>[] = [];
      for (let i = 0; i < 12; i++) {
        const call = i % 3 === 0 ? bump(store, `s${i}`) : i % 3 === 1 ? store.head() : store.readAll();
        calls.push(call.then(() => order.push(`op${i}`)));
      }
      expect(store.pendingQueries()).toBeGreaterThan(0);
      await Promise.all(calls);
      return order;
    };
    const first = await answers(await open(await server!.createDatabase(), true));
    const url = await server!.createDatabase();
    const store = await open(url, true);
    expect(await answers(store)).toEqual(first);
    // The reads answer in call order; the appends in the one turn that took them all.
    expect(first.filter((op) => Number(op.slice(2)) % 3 !== 0)).toEqual([
      'op1',
      'op2',
      'op4',
      'op5',
      'op7',
      'op8',
      'op10',
      'op11',
    ]);
    // The append turns that found nothing left to take end too, each with its turn of the event loop.
    for (let i = 0; i < 100 && store.pendingQueries() > 0; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(store.pendingQueries()).toBe(0);
    // Another store's commit: no notification wakes the lockstep store; its next commit publishes both in order.
    const seen: RecordedEvent[] = [];
    const sub = store.events$.subscribe((e) => seen.push(e));
    const other = await open(url);
    await bump(other, 'elsewhere');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(seen).toEqual([]);
    await bump(store, 'here');
    sub.unsubscribe();
    expect(seen.map((e) => [e.position, e.streamId])).toEqual([
      [5, 'elsewhere'],
      [6, 'here'],
    ]);
  });
});
