import type { Clock } from '@demiurge/contracts';
import { afterAll, expect, it } from 'vitest';
import { createDatabaseClock, openPostgresEventStore, type PostgresEventStore } from '../src/index.js';
import { testServer } from './test-server.js';

const { server, describePg } = await testServer();
const opened: PostgresEventStore[] = [];
afterAll(async () => {
  for (const store of opened.splice(0)) await store.close();
});

const skewed = (ms: number): Clock => ({ now: () => Date.now() + ms });
const MINUTE = 60_000;

describePg('the database clock', () => {
  it('two hosts whose clocks are minutes apart read the same time: the server clock, within the error bound', async () => {
    const url = await server!.createDatabase();
    const a = await openPostgresEventStore({ url });
    const b = await openPostgresEventStore({ url });
    opened.push(a, b);
    const behind = await a.databaseClock({ local: skewed(-3 * MINUTE) });
    const ahead = await b.databaseClock({ local: skewed(7 * MINUTE) });
    // The offsets undo the skews: about +3 min and -7 min (the server runs on this machine's clock).
    expect(Math.abs(behind.offsetMs - 3 * MINUTE)).toBeLessThan(5_000);
    expect(Math.abs(ahead.offsetMs + 7 * MINUTE)).toBeLessThan(5_000);
    const [x, y] = [behind.now(), ahead.now()];
    // Read back to back, they agree to within both bounds (plus the few ms between the two reads).
    expect(Math.abs(x - y)).toBeLessThanOrEqual(behind.errorBoundMs + ahead.errorBoundMs + 50);
    // And both are the server's time, to within the bound and the round trip of this check.
    const serverMs = await pgNow(url);
    expect(Math.abs(behind.now() - serverMs)).toBeLessThan(2_000);
    expect(Number.isFinite(behind.errorBoundMs)).toBe(true);
  });

  it('never goes backwards when a new sampling finds a smaller offset', async () => {
    let serverMs = 1_000_000;
    let localMs = 0;
    const clock = await createDatabaseClock(async () => serverMs, { local: { now: () => localMs }, resyncMs: 0 });
    expect(clock.now()).toBe(1_000_000);
    localMs = 500;
    expect(clock.now()).toBe(1_000_500);
    serverMs = 1_000_100; // the server says less time went by than the local clock did
    await clock.sync();
    expect(clock.now()).toBe(1_000_500);
    localMs = 1_000;
    expect(clock.now()).toBe(1_000_600);
    expect(clock.errorBoundMs).toBe(0);
  });

  it('keeps the sample with the shortest round trip, and reports half of it as the bound', async () => {
    let localMs = 0;
    const trips = [40, 10, 30];
    let i = 0;
    const clock = await createDatabaseClock(
      async () => {
        const trip = trips[i++ % trips.length]!;
        localMs += trip / 2;
        const at = 5_000 + localMs; // the server is 5 s ahead
        localMs += trip / 2;
        return at;
      },
      { local: { now: () => localMs }, resyncMs: 0 },
    );
    expect(clock.errorBoundMs).toBe(5);
    expect(clock.offsetMs).toBe(5_000);
  });
});

async function pgNow(url: string): Promise<number> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const res = await client.query<{ ms: number }>('SELECT extract(epoch FROM clock_timestamp())::float8 * 1000 AS ms');
    return res.rows[0]!.ms;
  } finally {
    await client.end();
  }
}
