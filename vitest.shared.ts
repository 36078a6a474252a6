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
