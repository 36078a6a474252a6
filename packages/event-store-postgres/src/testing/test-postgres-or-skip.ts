import { startTestPostgres, type TestPostgres } from './test-postgres.js';

/**
 * For a test file of another package that runs its suite on PostgreSQL too: starts the file's server
 * ({@link startTestPostgres}), or, when it cannot start outside CI, says why so the file can skip its
 * PostgreSQL variants under that title. In CI (`CI` set) a server that does not start throws.
 *
 * @example
 * const pg = await testPostgresOrSkip();
 * afterAll(() => pg.server?.stop());
 * describe.skipIf(!pg.server)(`on PostgreSQL${pg.skipped}`, () => { ... });
 */
export async function testPostgresOrSkip(): Promise<{ server: TestPostgres | undefined; skipped: string }> {
  try {
    return { server: await startTestPostgres(), skipped: '' };
  } catch (err) {
    if (process.env.CI) throw err;
    const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0];
    return { server: undefined, skipped: ` (skipped: PostgreSQL could not start here: ${reason})` };
  }
}
