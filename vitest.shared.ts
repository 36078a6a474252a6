import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ViteUserConfig } from 'vitest/config';
import type { Reporter, TestRunEndReason, Vitest } from 'vitest/node';

type TestConfig = NonNullable<ViteUserConfig['test']>;

/**
 * Writes `.test-results/run-errors.json`: the errors vitest reported outside any test (an unhandled rejection, an
 * uncaught exception, a worker that died) and why the run ended. These fail the run while every test passed, and
 * the JSON report does not show them; `scripts/test.mjs` prints them beside the failed tests.
 */
class RunErrorsReporter implements Reporter {
  private root = process.cwd();

  onInit(vitest: Vitest): void {
    this.root = vitest.config.root;
  }

  onTestRunEnd(
    _modules: unknown,
    errors: ReadonlyArray<{ name?: string; message?: string; stack?: string; [key: string]: unknown }>,
    reason: TestRunEndReason,
  ): void {
    const dir = join(this.root, '.test-results');
    mkdirSync(dir, { recursive: true });
    const unhandled = errors.map((e) => ({
      name: e.name,
      message: e.message,
      stack: e.stack?.split('\n').slice(0, 8).join('\n'),
      // Where vitest could tell: the file and test that were running when it was thrown.
      testPath: e.VITEST_TEST_PATH,
      testName: e.VITEST_TEST_NAME,
    }));
    writeFileSync(join(dir, 'run-errors.json'), `${JSON.stringify({ reason, unhandled }, null, 2)}\n`);
  }
}

/**
 * The test settings every package shares. Each package writes a JSON report to
 * `.test-results/vitest.json` (and `run-errors.json`: see {@link RunErrorsReporter}); `scripts/test.mjs` sums
 * those into the closing `N passed, N failed` line.
 */
export function sharedTestConfig(overrides: TestConfig = {}): TestConfig {
  return {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    reporters: ['default', ['json', { outputFile: '.test-results/vitest.json' }], new RunErrorsReporter()],
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
