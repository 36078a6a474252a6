import { testPostgresOrSkip } from '@demiurge/event-store-postgres/testing';
import { afterAll, beforeEach } from 'vitest';

/**
 * The store the served homes of a test file run on: their SQLite files by default; with
 * `DEMIURGE_TEST_STORE=postgres` (the `postgres` project of vitest.config.ts runs the listed files again that
 * way) a PostgreSQL server for the file and a fresh database for each test, handed to every host and CLI
 * command the test starts through `DEMIURGE_STORE_URL` (children inherit the environment).
 */
export const storeKind: 'sqlite' | 'postgres' = process.env.DEMIURGE_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';

const pg = storeKind === 'postgres' ? await testPostgresOrSkip() : undefined;
if (pg) {
  afterAll(() => pg.server?.stop());
  const server = pg.server;
  if (!server) beforeEach((ctx) => ctx.skip(pg.skipped));
  else
    beforeEach(async () => {
      process.env.DEMIURGE_STORE_URL = await server.createDatabase();
    });
}

/** The PostgreSQL database of the running test, or undefined on SQLite. */
export function testStoreUrl(): string | undefined {
  return storeKind === 'postgres' ? process.env.DEMIURGE_STORE_URL : undefined;
}
