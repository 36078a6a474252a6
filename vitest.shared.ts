import type { ViteUserConfig } from 'vitest/config';

type TestConfig = NonNullable<ViteUserConfig['test']>;

/**
 * The test settings every package shares. Each package writes a JSON report to
 * `.test-results/vitest.json`; `scripts/test.mjs` sums those into the closing `N passed, N failed` line.
 */
export function sharedTestConfig(overrides: TestConfig = {}): TestConfig {
  return {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    reporters: ['default', ['json', { outputFile: '.test-results/vitest.json' }]],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    pool: 'forks',
    ...overrides,
  };
}

/**
 * The same test files twice: as they are (`first`, e.g. `sqlite` or `memory`), and again with
 * `DEMIURGE_TEST_STORE=postgres` (`onBoth`, plus `postgresOnly`, which the first project leaves out).
 * Each file of the `postgres` project starts its own server (or uses `DEMIURGE_TEST_PG_URL`).
 */
export function storeProjects(
  first: string,
  onBoth: readonly string[],
  postgresOnly: readonly string[] = [],
  overrides: TestConfig = {},
): TestConfig {
  const { reporters, ...perProject } = sharedTestConfig(overrides);
  return {
    ...(reporters === undefined ? {} : { reporters }),
    projects: [
      { test: { ...perProject, name: first, exclude: ['**/node_modules/**', ...postgresOnly] } },
      {
        test: {
          ...perProject,
          name: 'postgres',
          include: [...onBoth, ...postgresOnly],
          env: { DEMIURGE_TEST_STORE: 'postgres' },
        },
      },
    ],
  };
}
