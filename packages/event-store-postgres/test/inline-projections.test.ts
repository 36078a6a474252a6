import { propertySettings } from '@demiurge/contracts/testing';
import {
  type AppendStream,
  createInMemoryEventStore,
  createInMemoryLog,
  defineProjector,
  dumpProjections,
  type EventStore,
} from '@demiurge/event-store';
import { counterProjector, notesProjector, testEventRegistry } from '@demiurge/event-store/testing';
import fc from 'fast-check';
import { afterEach, expect, it } from 'vitest';
import { openPostgresEventStore, type PostgresEventStore } from '../src/index.js';
import { testServer } from './test-server.js';

const { server, describePg } = await testServer();
const opened: PostgresEventStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

/**
 * Reads that depend on reads (the note's stream → its thread id → the thread), a list of a collection, and
 * a delete: the shapes the domain projectors use (sessions, runs) and more.
 */
const threadsProjector = defineProjector({
  name: 'threads',
  version: 1,
  handles: ['test.noted', 'test.created'],
  apply(event, tx) {
    if (event.type === 'test.created') {
      tx.put('membership', event.streamId, `t-${(event.data as { name: string }).name.length % 3}`);
      return;
    }
    const text = (event.data as { text: string }).text;
    const threadId = tx.get<string>('membership', event.streamId.replace(/^n-/, '')) ?? 't-none';
    const thread = tx.get<{ notes: number; last: string }>('threads', threadId) ?? { notes: 0, last: '' };
    if (text === '') {
      tx.delete('threads', threadId);
      return;
    }
    const open = tx.list<{ notes: number }>('threads');
    tx.put('threads', threadId, { notes: thread.notes + 1, last: text, openThreads: open.length });
  },
});

const projectors = [counterProjector, notesProjector, threadsProjector];

const appendArb = fc.array(
  fc.record({
    stream: fc.constantFrom('a', 'bb', 'ccc', 'dddd'),
    kind: fc.constantFrom('created', 'incremented', 'noted', 'noted'),
    n: fc.integer({ min: -3, max: 3 }),
    text: fc.constantFrom('', 'x', 'y', 'hello'),
  }),
  { minLength: 1, maxLength: 25 },
);

function toAppend(a: { stream: string; kind: string; n: number; text: string }): AppendStream {
  const event =
    a.kind === 'created'
      ? { type: 'test.created', data: { name: a.stream } }
      : a.kind === 'incremented'
        ? { type: 'test.incremented', data: { by: a.n } }
        : { type: 'test.noted', data: { text: a.text } };
  const note = a.kind === 'noted';
  return {
    streamType: note ? 'note' : 'counter',
    streamId: note ? `n-${a.stream}` : a.stream,
    expectedVersion: 'any',
    events: [event],
  };
}

async function open(url: string): Promise<PostgresEventStore> {
  const store = await openPostgresEventStore({ url, registry: testEventRegistry, projectors, maxConnections: 2 });
  opened.push(store);
  return store;
}

describePg('inline projections on PostgreSQL', () => {
  it('equal the in-memory store’s after the same appends, live and rebuilt (dependent reads, lists, deletes)', async () => {
    await fc.assert(
      fc.asyncProperty(appendArb, async (appends) => {
        const url = await server!.createDatabase();
        const pg = await open(url);
        const memory: EventStore = createInMemoryEventStore({
          registry: testEventRegistry,
          projectors,
          log: createInMemoryLog(),
        });
        for (const a of appends) {
          const append = toAppend(a);
          const [p, m] = await Promise.allSettled([pg.append(append), memory.append(append)]);
          expect(p.status).toBe(m.status);
        }
        const expected = await dumpProjections(memory);
        expect(await dumpProjections(pg)).toEqual(expected);
        await pg.rebuild({ batchSize: 4 });
        expect(await dumpProjections(pg)).toEqual(expected);
        await pg.close();
        await server!.dropDatabase(url);
      }),
      propertySettings(10),
    );
  });

  it('one host rebuilds while another appends: both hosts end equal to a fresh rebuild', async () => {
    const url = await server!.createDatabase();
    const [a, b] = [await open(url), await open(url)];
    const writes = fc.sample(appendArb, { numRuns: 40, seed: 3 }).flat().slice(0, 120);
    expect(writes).toHaveLength(120);
    for (const w of writes.slice(0, 60)) await a.append(toAppend(w));
    // b appends while a's rebuild is between its batches (one event per transaction): b must catch the
    // half-rebuilt read models up before applying its own events on them.
    const during = (async () => {
      for (const w of writes.slice(60)) await b.append(toAppend(w));
    })();
    const report = await a.rebuild({ batchSize: 1 });
    await during;
    // b's first append met the half-rebuilt models and finished the catch-up itself: a's rebuild applied less.
    expect(report.eventsApplied).toBeLessThan(60);
    const live = await dumpProjections(b);
    expect(await dumpProjections(a)).toEqual(live);
    await a.rebuild();
    expect(await dumpProjections(a)).toEqual(live);
    expect((await a.projection('threads').checkpoint()).position).toBe(await a.head());
  });
});
