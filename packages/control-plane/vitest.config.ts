import { defineConfig } from 'vitest/config';
import { storeProjects } from '../../vitest.shared.ts';

// The same suites on a real SQLite file and again on PostgreSQL (test/harness.ts reads DEMIURGE_TEST_STORE);
// test/pg-hosts.test.ts (several hosts on one database: wake-ups, the database clock) on PostgreSQL only.
export default defineConfig({
  test: storeProjects(
    'sqlite',
    [
      'test/model.test.ts',
      'test/control-plane.test.ts',
      'test/completion-notices.test.ts',
      'test/four-processes.test.ts',
    ],
    ['test/pg-hosts.test.ts', 'test/locked-claims.test.ts'],
  ),
});
