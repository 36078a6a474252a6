#!/usr/bin/env node
// Runs every package's lint, typecheck and tests through turbo (continuing past failures), then sums
// the vitest JSON reports into the closing line CI reads: `N passed, N failed`.
// Exits non-zero when anything failed or when no test ran.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pnpmCommand } from './setup.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const groups = ['packages', 'packages/projectors', 'services', 'test'];

function workspacePackages() {
  const out = [];
  for (const group of groups) {
    const base = join(root, group);
    if (!existsSync(base)) continue;
    for (const name of readdirSync(base)) {
      const manifest = join(base, name, 'package.json');
      if (existsSync(manifest)) out.push({ dir: join(base, name), pkg: JSON.parse(readFileSync(manifest, 'utf8')) });
    }
  }
  return out;
}

const packages = workspacePackages();
const tested = packages.filter((p) => p.pkg.scripts?.test);
for (const p of tested) rmSync(join(p.dir, '.test-results'), { recursive: true, force: true });

const [pnpm, ...pre] = pnpmCommand();
const turbo = spawnSync(pnpm, [...pre, 'exec', 'turbo', 'run', 'lint', 'typecheck', 'test', '--continue'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '0' },
});

let passed = 0;
let failed = 0;
const problems = [];
for (const p of tested) {
  const report = join(p.dir, '.test-results', 'vitest.json');
  const where = relative(root, p.dir);
  if (!existsSync(report)) {
    failed++;
    problems.push(`${where}: no test report (the suite did not run or crashed)`);
    continue;
  }
  const r = JSON.parse(readFileSync(report, 'utf8'));
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  if (r.numFailedTests > 0) problems.push(`${where}: ${r.numFailedTests} failed`);
  // Name each failed test and the first lines of its failure, so a CI log that shows only its tail
  // still says what failed and why.
  for (const f of r.testResults ?? []) {
    for (const a of f.assertionResults ?? []) {
      if (a.status !== 'failed') continue;
      const why = firstLines((a.failureMessages ?? []).join('\n'), 32);
      problems.push(`${relative(root, f.name)} > ${a.fullName ?? a.title}\n      ${why}`);
    }
  }
  // A file that failed with no failed test: it failed to load, or a hook outside the tests (beforeAll, afterAll)
  // failed or timed out.
  const broken = (r.testResults ?? []).filter(
    (f) => f.status === 'failed' && !f.assertionResults.some((a) => a.status === 'failed'),
  );
  for (const f of broken) {
    failed++;
    const how = f.assertionResults.length === 0 ? 'failed to load' : 'failed outside its tests';
    // The message's stack names the hook (its file and line).
    problems.push(`${relative(root, f.name)}: ${how}: ${firstLines(f.message ?? '', 6)}`);
  }
  // Errors outside any test (vitest.shared.ts's RunErrorsReporter): they fail the package's run with every test
  // passed, and the JSON report above does not show them.
  const runErrors = join(p.dir, '.test-results', 'run-errors.json');
  if (existsSync(runErrors)) {
    const { reason, unhandled } = JSON.parse(readFileSync(runErrors, 'utf8'));
    for (const e of unhandled) {
      failed++;
      const during = e.testPath ? ` (during ${relative(root, e.testPath)}${e.testName ? ` > ${e.testName}` : ''})` : '';
      const stack = (e.stack ?? '').split('\n').slice(1, 6).join('\n      ');
      problems.push(`${where}: error outside any test${during}: ${e.name ?? 'Error'}: ${e.message}\n      ${stack}`);
    }
    if (reason === 'interrupted') {
      failed++;
      problems.push(`${where}: the test run was interrupted`);
    }
  }
}
if (turbo.status !== 0 && problems.length === 0) {
  failed++;
  problems.push('turbo reported a failing task (lint, typecheck or build): see its output above');
}
console.log('');
for (const line of problems) console.log(`FAIL ${line}`);
if (passed + failed === 0) console.log('no test ran');
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 || passed === 0 || turbo.status !== 0 ? 1 : 0);

/** The first `n` non-blank lines of a failure message, indented under the line that names the test. */
function firstLines(text, n) {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(0, n)
    .join('\n      ');
}
