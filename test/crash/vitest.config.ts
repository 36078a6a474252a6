import { defineConfig } from 'vitest/config';
import { storeProjects } from '../../vitest.shared.ts';

// The crash loop keeps four host processes busy on its own: the unhappy-path files run next to it, one at a time.
// The seed's unhappy paths through a real `demiurge serve` run again with the hosts on PostgreSQL (`postgres`
// project: a server per file, a database per test); the multi-host SIGKILL test runs on PostgreSQL only.
export default defineConfig({
  test: storeProjects(
    'sqlite',
    [
      'src/serving-host.test.ts',
      'src/completion-turns.test.ts',
      'src/gateway-paths.test.ts',
      'src/scheduler-liveness.test.ts',
    ],
    ['src/multi-host-postgres.test.ts'],
    { maxWorkers: 2 },
  ),
});
