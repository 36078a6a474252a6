import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { demiurge } from './cli.js';

interface SimulateJson {
  ok: boolean;
  core: string | null;
  from: number;
  scenarios: number;
  failures: number;
  hash: string;
  eventTypes: Record<string, number>;
  runs: {
    seed: number;
    hash: string;
    events: number;
    ok: boolean;
    failure?: { step: number; problems: string[]; trace: string[]; shrunkFrom: number };
  }[];
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const json = async (...args: string[]) => {
  const run = await demiurge(['simulate', ...args, '--json']);
  return { code: run.code, stderr: run.stderr, report: JSON.parse(run.stdout) as SimulateJson };
};

describe('demiurge simulate (child process)', () => {
  it('runs N scenarios from seed S and prints each run and the batch with their log hashes; the same seeds give the same hashes', async () => {
    const first = await json('--seeds', '4', '--seed', '1');
    expect(first.code).toBe(0);
    expect(first.report).toMatchObject({ ok: true, from: 1, scenarios: 4, failures: 0, core: null });
    expect(first.report.runs.map((r) => r.seed)).toEqual([1, 2, 3, 4]);
    for (const run of first.report.runs) expect(run.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(first.report.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(Math.max(...first.report.runs.map((r) => r.events))).toBeGreaterThan(20);
    // Another process, the same seeds: the same logs, byte for byte.
    const again = await json('--seeds', '2', '--seed', '1');
    expect(again.report.runs.map((r) => r.hash)).toEqual(first.report.runs.slice(0, 2).map((r) => r.hash));
  });

  it("operator pauses and resumes and an approval nobody answers are simulated: the seed's report counts them", async () => {
    // Seed 21: a run paused by the operator, then resumed. Seed 100: a paused run, and an approval that expires
    // when the virtual clock is advanced past its 15 minutes.
    const resumed = await json('--seeds', '1', '--seed', '21');
    expect(resumed.code).toBe(0);
    expect(resumed.report.eventTypes['run.paused']).toBe(1);
    expect(resumed.report.eventTypes['run.resumed (of a paused run)']).toBe(1);
    const expired = await json('--seeds', '1', '--seed', '100');
    expect(expired.code).toBe(0);
    expect(expired.report.eventTypes['run.paused']).toBe(1);
    expect(expired.report.eventTypes['approval.expired']).toBe(1);
  });

  it('simulates your own core (--core) and prints a text report', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'demiurge-sim-core-'));
    dirs.push(dir);
    const core = join(dir, 'my-core');
    cpSync(join(import.meta.dirname, '..', '..', '..', 'agent'), core, { recursive: true });
    const run = await demiurge(['simulate', '--core', core, '--seeds', '2', '--seed', '3']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`simulate: 2 scenario(s), seeds 3..4, on ${core}: all passed`);
    expect(run.stdout).toMatch(/batch hash [0-9a-f]{64}/);
  });

  it('a failing scenario is reported with its seed and the shortest trace that reproduces it (exit 1)', async () => {
    const run = await demiurge(['simulate', '--seeds', '3', '--seed', '6', '--inject-bug', 'ack-before-send']);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/FAIL seed \d+ \(log [0-9a-f]{16}\): step \d+, dispatch deliveries/);
    expect(run.stdout).toContain('acknowledged (sent) but the sink never received it');
    expect(run.stdout).toMatch(/shortest trace \(\d+ of \d+ actions\):\n\s+1\. submit/);
    expect(run.stdout).toMatch(/reproduce: demiurge simulate --seed \d+ --seeds 1/);
    expect(run.stdout).toContain('simulate: 3 scenario(s), seeds 6..8, on the bundled core: 1 failed');
  });

  it('a core that does not exist is a usage error naming it; nothing runs', async () => {
    const run = await demiurge(['simulate', '--core', '/nonexistent/core', '--seeds', '1']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('demiurge: --core: /nonexistent/core does not exist\n');
    const bad = await demiurge(['simulate', '--seeds', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--seeds must be a whole number >= 1');
  });
});
