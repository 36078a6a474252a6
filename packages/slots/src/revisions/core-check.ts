import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { loadCore } from '../core-loader.js';
import { createSlotModuleLoader } from '../slot-module.js';

/** What `checkCore` found: `ok` when the core loads, every slot module imports and its own tests pass. */
export interface CoreCheckReport {
  readonly ok: boolean;
  readonly dir: string;
  readonly coreId: string | null;
  /** The slots whose modules were imported. */
  readonly slots: readonly string[];
  /** The core's own test files that were run (`tests/*.test.mjs`/`.js`). */
  readonly tests: readonly string[];
  /** Every problem, one line each (file first where there is one). */
  readonly problems: readonly string[];
}

/** Runs one test file of a core in `cwd` within `timeoutMs`: the failure's description, or undefined. */
export type CoreTestRunner = (cwd: string, file: string, timeoutMs: number) => Promise<string | undefined>;

/**
 * Checks a core without changing anything: the loader's validation (agent.yaml, pipelines.yaml, every
 * slot.yaml), an import of every slot module, and the core's own tests if it has any (`tests/*.test.mjs` or
 * `tests/*.test.js`, each run with `node --test`, which must exit 0 within `testTimeoutMs`).
 *
 * @example
 * ```ts
 * const report = await checkCore('agent');
 * if (!report.ok) console.error(report.problems.join('\n'));
 * ```
 */
export async function checkCore(
  dir: string,
  options: {
    readonly cacheDir?: string;
    readonly testTimeoutMs?: number;
    /** Runs one of the core's test files (`@demiurge/workers`' `runNodeTestFile`): the failure, or undefined. */
    readonly runTest?: CoreTestRunner;
  } = {},
): Promise<CoreCheckReport> {
  let core: Awaited<ReturnType<typeof loadCore>>;
  try {
    core = await loadCore(dir);
  } catch (err) {
    return { ok: false, dir, coreId: null, slots: [], tests: [], problems: [messageOf(err)] };
  }
  const problems: string[] = [];
  const modules = createSlotModuleLoader(options.cacheDir ? { cacheDir: options.cacheDir } : {});
  for (const spec of core.slots.values()) {
    try {
      await modules.load(spec);
    } catch (err) {
      problems.push(`slot ${spec.id}: ${messageOf(err)}`);
    }
  }
  const tests = await coreTests(core.dir);
  for (const test of tests) {
    if (!options.runTest) {
      problems.push(`test ${test}: not run (this check was given no test runner)`);
      continue;
    }
    const failure = await options.runTest(core.dir, test, options.testTimeoutMs ?? 60_000);
    if (failure) problems.push(`test ${test}: ${failure}`);
  }
  return { ok: problems.length === 0, dir: core.dir, coreId: core.id, slots: [...core.slots.keys()], tests, problems };
}

async function coreTests(dir: string): Promise<string[]> {
  try {
    const names = await readdir(join(dir, 'tests'));
    return names
      .filter((n) => /\.test\.m?js$/.test(n))
      .sort()
      .map((n) => `tests/${n}`);
  } catch {
    return [];
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
