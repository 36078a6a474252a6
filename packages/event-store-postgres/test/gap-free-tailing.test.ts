import type { RecordedEvent } from '@demiurge/contracts';
import { type AppendStream, StreamVersionConflictError } from '@demiurge/event-store';
import { counterProjector, testEventRegistry } from '@demiurge/event-store/testing';
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { openPostgresEventStore, type PostgresEventStore } from '../src/index.js';
import { testServer } from './test-server.js';

const { server, describePg } = await testServer();
const opened: PostgresEventStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

async function open(url: string, projectors = [counterProjector]): Promise<PostgresEventStore> {
  const store = await openPostgresEventStore({ url, registry: testEventRegistry, projectors, maxConnections: 3 });
  opened.push(store);
  return store;
}

describePg('global order under concurrent writers', () => {
  it('six writers on their own pools, a tailing subscriber and a polling reader: every event once, in position order, no gap ever visible', async () => {
    const url = await server!.createDatabase();
    const writers = await Promise.all(Array.from({ length: 6 }, () => open(url)));
    const tailer = await open(url, []);
    const perWriter = 60;
    const total = { events: 0, conflicts: 0 };

    // The subscriber tails by LISTEN/NOTIFY: another pool, another connection, no polling.
    const seen: RecordedEvent[] = [];
    let done: () => void = () => {};
    const finished = new Promise<void>((resolve) => {
      done = resolve;
    });
    let expected = Number.POSITIVE_INFINITY;
    const sub = tailer.subscribe({ from: 1 }).subscribe((event) => {
      seen.push(event);
      if (seen.length >= expected) done();
    });

    // A reader polling the log: each read must continue exactly where the last one ended (the gap problem is a
    // position N+1 visible while N is not yet committed; a reader would skip N for good).
    let stopPolling = false;
    const holes: string[] = [];
    const polling = (async () => {
      let last = 0;
      while (!stopPolling) {
        const batch = await tailer.readAll({ from: last + 1 });
        batch.forEach((event, i) => {
          if (event.position !== last + 1 + i) holes.push(`after ${last} came ${event.position}`);
        });
        last = batch.at(-1)?.position ?? last;
        await new Promise((r) => setTimeout(r, 1));
      }
      return last;
    })();

    await Promise.all(
      writers.map(async (store, w) => {
        // Each writer keeps several appends in flight: its own stream, a stream shared by all (conflicts), and
        // multi-stream appends.
        await Promise.all(
          Array.from({ length: perWriter }, async (_, i) => {
            const own = `w${w}-${i % 5}`;
            const events = Array.from({ length: 1 + (i % 3) }, (__, k) => ({
              type: 'test.incremented',
              data: { by: k + 1 },
            }));
            const streams: AppendStream[] = [{ streamType: 'counter', streamId: own, expectedVersion: 'any', events }];
            if (i % 4 === 0) {
              const v = await store.streamVersion('shared');
              streams.push({
                streamType: 'counter',
                streamId: 'shared',
                expectedVersion: v,
                events: [{ type: 'test.incremented', data: { by: 1 } }],
              });
            }
            try {
              const result = await store.append(streams);
              total.events += result.events.length;
            } catch (err) {
              if (!(err instanceof StreamVersionConflictError)) throw err;
              total.conflicts++;
            }
          }),
        );
      }),
    );
    expected = total.events;
    if (seen.length >= expected) done();
    await finished;
    stopPolling = true;
    const polledTo = await polling;
    sub.unsubscribe();

    expect(total.conflicts).toBeGreaterThan(0);
    expect(holes).toEqual([]);
    const head = await tailer.head();
    expect(head).toBe(total.events);
    expect(polledTo).toBeLessThanOrEqual(head);
    expect(seen.map((e) => e.position)).toEqual(Array.from({ length: head }, (_, i) => i + 1));
    const log = await tailer.readAll();
    expect(seen.map((e) => e.eventId)).toEqual(log.map((e) => e.eventId));
    // Inline projections on six hosts stayed equal to the log.
    const live = await writers[0]!.projection('counter').dump();
    await writers[0]!.rebuild();
    expect(await writers[0]!.projection('counter').dump()).toEqual(live);
    expect((await tailer.verifyChain()).ok).toBe(true);
  });

  it('events$ on one host publishes another host’s commits, in order, woken by NOTIFY', async () => {
    const url = await server!.createDatabase();
    const [a, b] = [await open(url), await open(url)];
    const fromB: number[] = [];
    const sub = a.events$.subscribe((e) => fromB.push(e.position));
    await b.append({
      streamType: 'counter',
      streamId: 'x',
      expectedVersion: 'no_stream',
      events: [{ type: 'test.created', data: { name: 'x' } }],
    });
    await a.append({
      streamType: 'counter',
      streamId: 'y',
      expectedVersion: 'no_stream',
      events: [{ type: 'test.created', data: { name: 'y' } }],
    });
    await b.append({
      streamType: 'counter',
      streamId: 'x',
      expectedVersion: 1,
      events: [{ type: 'test.incremented', data: { by: 2 } }],
    });
    for (let i = 0; i < 1000 && fromB.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
    sub.unsubscribe();
    expect(fromB).toEqual([1, 2, 3]);
    // a's inline projection caught up with b's first commit before applying its own.
    expect(await a.projection('counter').get('streams', 'x')).toEqual({ name: 'x', total: 2, events: 2 });
    expect(await a.projection('counter').get('totals', 'all')).toBe(2);
  });
});

describePg('the LISTEN connection', () => {
  it('comes back after the server cut it, and the events committed meanwhile still reach events$ in order', async () => {
    const url = await server!.createDatabase();
    const [a, b] = [await open(url, []), await open(url, [])];
    const seen: number[] = [];
    const sub = a.events$.subscribe((e) => seen.push(e.position));
    const created = (id: string) => ({
      streamType: 'counter',
      streamId: id,
      expectedVersion: 'no_stream' as const,
      events: [{ type: 'test.created', data: { name: id } }],
    });
    await b.append(created('before'));
    const admin = new pg.Client({ connectionString: server!.url });
    await admin.connect();
    try {
      const cut = await admin.query(
        `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
         WHERE datname = $1 AND application_name = 'demiurge-listen'`,
        [new URL(url).pathname.slice(1)],
      );
      expect(cut.rows).toHaveLength(2); // a's and b's listeners
      await b.append(created('while-cut'));
      await b.append(created('after'));
      for (let i = 0; i < 1000 && seen.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
      expect(seen).toEqual([1, 2, 3]);
    } finally {
      sub.unsubscribe();
      await admin.end();
    }
  });
});
