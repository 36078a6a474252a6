import { InvalidAppendError } from '@demiurge/event-store';
import { counterProjector, testEventRegistry } from '@demiurge/event-store/testing';
import { afterEach, expect, it } from 'vitest';
import { openPostgresEventStore, type PostgresEventStore } from '../src/index.js';
import { testServer } from './test-server.js';

const { server, describePg } = await testServer();
const opened: PostgresEventStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

async function open(url: string): Promise<PostgresEventStore> {
  const store = await openPostgresEventStore({ url, registry: testEventRegistry, projectors: [counterProjector] });
  opened.push(store);
  return store;
}

const increment = (by: number) => ({
  streamType: 'counter',
  streamId: 'shared',
  expectedVersion: 'any' as const,
  events: [
    { type: 'test.incremented', data: { by } },
    { type: 'test.incremented', data: { by } },
  ],
});

describePg('appends from several hosts', () => {
  it('one idempotency key sent by four hosts at once appends once; the others get the same events back', async () => {
    const url = await server!.createDatabase();
    const hosts = await Promise.all([open(url), open(url), open(url), open(url)]);
    const results = await Promise.all(hosts.map((h, i) => h.append(increment(i + 1), { idempotencyKey: 'once' })));
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    const first = results.find((r) => !r.replayed)!;
    for (const r of results) expect(r.events).toEqual(first.events);
    expect(await hosts[0]!.head()).toBe(2);
    const by = (first.events[0]!.data as { by: number }).by;
    expect(await hosts[3]!.projection('counter').get('totals', 'all')).toBe(2 * by);
  });

  it('an event id already recorded is refused by name, and the log is left as it was', async () => {
    const url = await server!.createDatabase();
    const [a, b] = [await open(url), await open(url)];
    await a.append({ ...increment(1), events: [{ type: 'test.incremented', data: { by: 1 }, eventId: 'evt_fixed' }] });
    const err = await b
      .append({ ...increment(1), events: [{ type: 'test.incremented', data: { by: 5 }, eventId: 'evt_fixed' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidAppendError);
    expect((err as Error).message).toBe('event id evt_fixed is already recorded');
    expect(await b.head()).toBe(1);
    expect(await b.projection('counter').get('totals', 'all')).toBe(1);
    await b.append(increment(2)); // the refused append left nothing behind: the next one goes through
    expect(await a.head()).toBe(3);
  });
});
