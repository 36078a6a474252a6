import { type DecidedAppend, defineProjector } from '@demiurge/event-store';
import { testEventRegistry } from '@demiurge/event-store/testing';
import pg from 'pg';
import { expect, it } from 'vitest';
import { openPostgresEventStore } from '../src/index.js';
import { testServer } from './test-server.js';

const { server, describePg } = await testServer();

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

const takeOne: DecidedAppend<string | undefined> = {
  listings: [{ projector: 'queue', collection: 'open', limit: 2, streamField: 'id', joinCollection: 'items' }],
  decide: ([listed], taken) => {
    const entry = listed!.find((e) => !taken.has(e.streamId!));
    if (!entry) return { streams: [], result: undefined };
    return {
      streams: [
        {
          streamType: 'test',
          streamId: entry.streamId!,
          expectedVersion: entry.streamVersion!,
          events: [{ type: 'test.noted', data: { text: 'taken' } }],
        },
      ],
      result: entry.streamId,
    };
  },
};

/** Sequential scans of each table so far (read after the store's connections closed: their counts are flushed). */
async function seqScans(url: string): Promise<Record<string, number>> {
  // A backend flushes its counts as it exits, just after its client hung up.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ relname: string; seq_scan: string }>(
      `SELECT relname, seq_scan FROM pg_stat_user_tables WHERE relname IN ('events', 'projection_documents')`,
    );
    return Object.fromEntries(rows.map((r) => [r.relname, Number(r.seq_scan)]));
  } finally {
    await client.end();
  }
}

describePg("the appends' prepared statements on a grown log", () => {
  it('read stream heads and listed items through the indexes: no sequential scan per append', async () => {
    const url = await server!.createDatabase();
    const before = await seqScans(url);
    const store = await openPostgresEventStore({ url, registry: testEventRegistry, projectors: [queue] });
    const created = (from: number, n: number) =>
      store.append(
        Array.from({ length: n }, (_, i) => ({
          streamType: 'test',
          streamId: `item-${String(from + i).padStart(5, '0')}`,
          expectedVersion: 'no_stream' as const,
          events: [{ type: 'test.created', data: { name: 'new' } }],
        })),
      );
    // Past the five custom plans while the log is small: PostgreSQL then keeps a generic plan for each prepared
    // statement, made for a tiny table, as a host's plans are after its first appends.
    for (let i = 0; i < 10; i++) await created(i, 1);
    // Then the log grows: 1,500 items (an event and two documents each), in appends of 100 streams.
    for (let batch = 0; batch < 15; batch++) await created(10 + batch * 100, 100);
    for (let i = 0; i < 30; i++) {
      await store.append({
        streamType: 'test',
        streamId: `item-${String(1000 + i).padStart(5, '0')}`,
        expectedVersion: 1,
        events: [{ type: 'test.noted', data: { text: 'by hand' } }],
      });
      const { result } = await store.appendDecided!(takeOne);
      expect(result).toBe(`item-${String(i).padStart(5, '0')}`);
    }
    await store.close();
    const after = await seqScans(url);
    // Opening the store reads a few small things; 85 appends must not each scan the log or the documents.
    expect((after.events ?? 0) - (before.events ?? 0)).toBeLessThan(10);
    expect((after.projection_documents ?? 0) - (before.projection_documents ?? 0)).toBeLessThan(10);
  });
});

describePg("the appends' prepared statements are planned once", () => {
  it('runs every statement on its generic plan: no planning per append (plan_cache_mode)', async () => {
    const url = await server!.createDatabase();
    // The store's connections, as they send their named statements.
    const clients = new Set<pg.Client>();
    const original = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
      if (typeof config === 'object' && config !== null && 'name' in config) clients.add(this);
      return (original as (...args: unknown[]) => unknown).call(this, config, ...rest);
    } as typeof original;
    const store = await openPostgresEventStore({ url, registry: testEventRegistry, projectors: [queue] });
    try {
      for (let i = 0; i < 40; i++) {
        await store.append({
          streamType: 'test',
          streamId: `item-${i}`,
          expectedVersion: 'no_stream',
          events: [{ type: 'test.created', data: { name: 'new' } }],
        });
      }
      for (let i = 0; i < 20; i++) await store.appendDecided!(takeOne);
    } finally {
      pg.Client.prototype.query = original;
    }
    // Each connection's prepared statements, with how often PostgreSQL planned each for its values (a custom
    // plan: planning on every run) or used the one generic plan.
    const plans: { statement: string; generic: number; custom: number }[] = [];
    for (const client of clients) {
      const { rows } = await client.query<{ statement: string; generic_plans: string; custom_plans: string }>(
        `SELECT left(regexp_replace(statement, '\\s+', ' ', 'g'), 60) AS statement, generic_plans, custom_plans
          FROM pg_prepared_statements WHERE name LIKE 'dm\\_%'`,
      );
      for (const r of rows) {
        plans.push({ statement: r.statement, generic: Number(r.generic_plans), custom: Number(r.custom_plans) });
      }
    }
    await store.close();
    // The appends' statements ran dozens of times: on the generic plan, planned once per connection.
    expect(plans.reduce((n, p) => n + p.generic, 0)).toBeGreaterThan(50);
    expect(plans.filter((p) => p.custom > 0)).toEqual([]);
  });
});
