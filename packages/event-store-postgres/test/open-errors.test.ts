import { createServer } from 'node:net';
import { CorruptDatabaseError, DatabaseNewerThanCodeError } from '@demiurge/event-store';
import { testEventRegistry } from '@demiurge/event-store/testing';
import pg from 'pg';
import { expect, it } from 'vitest';
import { openPostgresEventStore, SCHEMA_VERSION, StoreUnavailableError } from '../src/index.js';
import { testServer } from './test-server.js';

const { server, describePg } = await testServer();

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const oneLine = (err: unknown) => {
  expect(err).toBeInstanceOf(StoreUnavailableError);
  const message = (err as Error).message;
  expect(message).not.toContain('\n');
  return message;
};

describePg('opening the store', () => {
  it('a refused connection is one clear line naming the server, without the password', async () => {
    const port = await closedPort();
    const err = await openPostgresEventStore({ url: `postgres://demiurge:s3cret@127.0.0.1:${port}/demiurge` }).catch(
      (e: unknown) => e,
    );
    const message = oneLine(err);
    expect(message).toBe(
      `cannot open the event store at postgres://demiurge@127.0.0.1:${port}/demiurge: connection refused (is PostgreSQL running and listening on that host and port?)`,
    );
    expect(err).toMatchObject({ code: 'store_unavailable' });
  });

  it('bad credentials are one clear line naming the user, without the password', async () => {
    const url = new URL(await server!.createDatabase());
    url.password = 'wrong-password';
    const err = await openPostgresEventStore({ url: url.toString() }).catch((e: unknown) => e);
    const message = oneLine(err);
    expect(message).toContain(`password authentication failed for user "${url.username}"`);
    expect(message).not.toContain('wrong-password');
  });

  it('a missing database is one clear line too', async () => {
    const url = new URL(server!.url);
    url.pathname = '/no_such_database';
    const message = oneLine(await openPostgresEventStore({ url: url.toString() }).catch((e: unknown) => e));
    expect(message).toContain('database "no_such_database" does not exist');
  });

  it('migrates once when hosts open together, and refuses a schema newer than the code, changing nothing', async () => {
    const url = await server!.createDatabase();
    const stores = await Promise.all(
      Array.from({ length: 4 }, () => openPostgresEventStore({ url, registry: testEventRegistry })),
    );
    await Promise.all(stores.map((s) => s.close()));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const applied = await client.query('SELECT version FROM schema_migrations ORDER BY version');
      expect(applied.rows.map((r) => r.version)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
      await client.query(
        `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, '999_from_the_future', 'later')`,
        [SCHEMA_VERSION + 1],
      );
      const err = await openPostgresEventStore({ url, registry: testEventRegistry }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DatabaseNewerThanCodeError);
      expect((err as Error).message).toContain(`schema version ${SCHEMA_VERSION + 1}, newer than this Demiurge`);
      const after = await client.query('SELECT count(*)::int AS n FROM schema_migrations');
      expect(after.rows[0].n).toBe(SCHEMA_VERSION + 1);
    } finally {
      await client.end();
    }
  });

  it('refuses a database another program made, changing nothing', async () => {
    const url = await server!.createDatabase();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query('CREATE TABLE events (id serial PRIMARY KEY, what text)');
      const err = await openPostgresEventStore({ url }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CorruptDatabaseError);
      expect((err as Error).message).toContain('it has a table "events" that Demiurge did not create');
      const tables = await client.query(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`,
      );
      expect(tables.rows.map((r) => r.table_name)).toEqual(['events']);
    } finally {
      await client.end();
    }
  });

  it('the database refuses UPDATE, DELETE and TRUNCATE of events, whoever sends them', async () => {
    const url = await server!.createDatabase();
    const store = await openPostgresEventStore({ url, registry: testEventRegistry });
    await store.append({
      streamType: 'counter',
      streamId: 'a',
      expectedVersion: 'no_stream',
      events: [{ type: 'test.created', data: { name: 'a' } }],
    });
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      for (const statement of [`UPDATE events SET data = '{"name":"b"}'`, 'DELETE FROM events', 'TRUNCATE events']) {
        await expect(client.query(statement)).rejects.toThrow(
          /events is append-only: (UPDATE|DELETE|TRUNCATE) is refused/,
        );
      }
      expect((await store.readStream('a'))[0]!.data).toEqual({ name: 'a' });
      expect((await store.verifyChain()).ok).toBe(true);
    } finally {
      await client.end();
      await store.close();
    }
  });
});
