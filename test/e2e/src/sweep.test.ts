import { appendFileSync, cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { demiurge } from './cli.js';

/** What `demiurge sweep --json` prints (the parts checked here). */
interface SweepJson {
  ok: boolean;
  core: string | null;
  problems: number;
  scenarios: {
    scenario: string;
    commits: number;
    planned: number;
    covered: number;
    full: boolean;
    problems: { point: string; check: string; detail: string }[];
    points: { point: string; label: string; reached: boolean; problems: number }[];
  }[];
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the bundled Agent Core, to sweep as "your own". */
function copyCore(): string {
  const dir = mkdtempSync(join(tmpdir(), 'demiurge-sweep-core-'));
  dirs.push(dir);
  const core = join(dir, 'my-core');
  cpSync(join(import.meta.dirname, '..', '..', '..', 'agent'), core, { recursive: true });
  return core;
}

/**
 * `demiurge sweep` (docs/crash-sweep.md): the crash-point sweep of the scripted scenarios on the real host,
 * through the real CLI. Each crash point is a `demiurge serve` that SIGKILLs itself at a store commit, a
 * restart, the scenario settled and `demiurge verify`: 5–12 s a point, so the samples are small.
 */
describe('demiurge sweep (child process)', () => {
  it('sweeps your own core: the host killed at sampled commits, restarted, checked; commits, points planned and covered, no problem (exit 0)', async () => {
    const core = copyCore();
    // `--keep`: a run that finds a problem keeps its directory (named in the JSON, printed below on a failure).
    const run = await demiurge([
      'sweep',
      '--core',
      core,
      '--scenario',
      'delivery',
      '--sample',
      '4',
      '--keep',
      '--json',
    ]);
    expect(run.code, `${run.stderr}\n${run.stdout}`).toBe(0);
    const report = JSON.parse(run.stdout) as SweepJson;
    expect(report).toMatchObject({ ok: true, core, problems: 0 });
    expect(report.scenarios.map((s) => s.scenario)).toEqual(['delivery']);
    const [delivery] = report.scenarios;
    expect(delivery!.commits).toBeGreaterThan(5);
    expect(delivery).toMatchObject({ planned: 4, full: false, problems: [] });
    // Each covered point is a host that wrote its crash line and killed itself there.
    expect(delivery!.covered).toBeGreaterThanOrEqual(2);
    expect(delivery!.points.filter((p) => p.reached)).toHaveLength(delivery!.covered);
    expect(delivery!.points[0]).toMatchObject({ point: '1:before', reached: true, problems: 0 });
    expect(delivery!.points[0]!.label).toMatch(/^commit 1 before \(.+\)$/);
  }, 240_000);

  it('can fail: a host that answers a submit before committing it is caught, the problem named with its crash point, the failing run kept (exit 1)', async () => {
    const run = await demiurge([
      'sweep',
      '--scenario',
      'delivery',
      '--at',
      '1:before',
      '--inject-bug',
      'ack-before-commit',
      '--keep',
    ]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toMatch(
      /^delivery: \d+ commits, 1 of \d+ crash points covered \(sample of 1\), [1-9]\d* problems/,
    );
    expect(run.stdout).toMatch(
      /acknowledged submit lost: \d+\n\s+at 1:before commit 1 before \([^)]+\): (run|turn) \w+ of an acknowledged submit has no events/,
    );
    expect(run.stdout).toContain('rerun: demiurge sweep --scenario delivery --at 1:before');
    // The failing run's directory is kept (the passing counting run's is not): its home's store to inspect.
    const kept = /^ {2}kept 1:before: (.+)$/m.exec(run.stdout)?.[1];
    expect(kept, run.stdout).toBeDefined();
    dirs.push(kept!);
    expect(existsSync(join(kept!, 'home', 'runtime', 'runtime.sqlite3'))).toBe(true);
    expect(existsSync(join(kept!, 'commits.jsonl'))).toBe(true);
    expect(run.stdout).not.toMatch(/kept uncrashed/);
    expect(run.stdout).toMatch(/sweep: 1 scenario\(s\) on the bundled core: [1-9]\d* problem\(s\)\n$/);
    expect(run.stderr).not.toMatch(/unexpected error/i);
  }, 240_000);

  it('reports a core whose input slot throws: the turn fails, named at the uncrashed run (exit 1)', async () => {
    const core = copyCore();
    appendFileSync(join(core, 'input', 'base_input', 'module.ts'), '\nthrow new Error("broken on purpose");\n');
    const run = await demiurge(['sweep', '--core', core, '--scenario', 'delivery', '--sample', '1', '--json']);
    expect(run.code, run.stderr).toBe(1);
    const report = JSON.parse(run.stdout) as SweepJson;
    expect(report).toMatchObject({ ok: false, core });
    expect(report.scenarios[0]!.problems).toContainEqual({
      point: 'uncrashed',
      check: 'scenario ran',
      detail: expect.stringMatching(/input slot base_input failed .*broken on purpose/),
    });
  }, 120_000);

  it('refuses bad input before starting any host: a missing or unloadable core, an unknown scenario, a malformed crash point (exit 2)', async () => {
    const missing = await demiurge(['sweep', '--core', '/nonexistent/core']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe('demiurge: --core: /nonexistent/core does not exist\n');
    const unknown = await demiurge(['sweep', '--scenario', 'teleport']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("'teleport' is invalid");
    const core = copyCore();
    writeFileSync(join(core, 'pipelines.yaml'), 'input: [\n');
    const unloadable = await demiurge(['sweep', '--core', core]);
    expect(unloadable.code).toBe(2);
    expect(unloadable.stderr).toMatch(/^demiurge: --core: .*pipelines\.yaml:\d+: invalid YAML/);
    const point = await demiurge(['sweep', '--at', '7:during']);
    expect(point.code).toBe(2);
    expect(point.stderr).toBe('demiurge: --at: crash point "7:during" is not <n>:<before|after> (e.g. 7:before)\n');
  });
});
