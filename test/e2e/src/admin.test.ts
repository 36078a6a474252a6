import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { demiurge, demiurgeJson, tempHome } from './cli.js';

let home: ReturnType<typeof tempHome>;
beforeEach(() => {
  home = tempHome();
});
afterEach(() => home.remove());

const mode = (path: string) => statSync(path).mode & 0o777;

describe('demiurge init and doctor (child process)', () => {
  it('init creates the home and runtime dir (0700), a commented config and the store, then keeps them', async () => {
    const dir = join(home.path, 'home');
    const run = await demiurge(['init', '--home', dir]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`created  home        ${dir} (0700)`);
    expect(run.stdout).toContain(`created  runtime dir ${join(dir, 'runtime')} (0700)`);
    expect(run.stdout).toContain(`created  config      ${join(dir, 'config.yaml')} (provider fake)`);
    expect(run.stdout).toMatch(/created {2}database {4}\S+runtime\.sqlite3 \(schema v\d+, 9 projections, 0 events\)/);
    expect(mode(dir)).toBe(0o700);
    expect(mode(join(dir, 'runtime'))).toBe(0o700);
    expect(existsSync(join(dir, 'runtime', 'runtime.sqlite3'))).toBe(true);
    const config = readFileSync(join(dir, 'config.yaml'), 'utf8');
    expect(config).toMatch(/^provider:\n {2}# .*\n {2}name: fake$/m);
    for (const key of [
      'model',
      'base_url',
      'api_key_env',
      'fake_script',
      'core',
      'workspace',
      'synchronous',
      'run_ms',
      'work_ms',
      'on_write',
      'url',
      'timeout_ms',
      'enabled',
      'tick_ms',
      'grace_ms',
    ]) {
      expect(config).toMatch(new RegExp(`^\\s*#\\s+${key}: `, 'm'));
    }
    writeFileSync(join(dir, 'config.yaml'), 'provider:\n  name: fake\n  model: mine\n');
    const again = await demiurgeJson<{
      steps: { what: string; action: string }[];
      provider: string;
      projections: string[];
    }>(['init', '--home', dir]);
    expect(again.json.steps.map((s) => `${s.what} ${s.action}`)).toEqual([
      'home kept',
      'runtime dir kept',
      'config kept',
      'database kept',
    ]);
    expect(again.json.projections).toEqual([
      'sessions',
      'runs',
      'task-board',
      'work-items',
      'outbox',
      'operator-status',
      'slot-runs',
      'schedule-instances',
      'mcp-servers',
    ]);
    expect(readFileSync(join(dir, 'config.yaml'), 'utf8')).toContain('model: mine');
  });

  it('doctor checks settings, schema, core and the runtime dir permissions, each ok/warn/fail', async () => {
    await demiurge(['init', '--home', home.path]);
    chmodSync(home.path, 0o700);
    const ok = await demiurge(['doctor', '--home', home.path]);
    expect(ok.code).toBe(0);
    const lines = ok.stdout.trim().split('\n');
    expect(lines.map((l) => l.split(/\s+/)[0])).toEqual([...lines.slice(0, -1).map(() => 'ok'), 'doctor:']);
    expect(ok.stdout).toMatch(/^ok {4}journal mode {4}wal$/m);
    expect(ok.stdout).toMatch(/^ok {4}synchronous {5}FULL/m);
    expect(ok.stdout).toMatch(/^ok {4}busy timeout {4}\d+ ms$/m);
    expect(ok.stdout).toMatch(/^ok {4}schema version {2}\d+$/m);
    expect(ok.stdout).toMatch(/^ok {4}runtime dir {5}\S+runtime \(0700\)$/m);
    expect(ok.stdout).toMatch(/^ok {4}core {12}\S+agent \(bundled\)$/m);

    chmodSync(join(home.path, 'runtime'), 0o755);
    const loose = await demiurge(['doctor', '--json', '--home', home.path]);
    expect(loose.code).toBe(1);
    const report = JSON.parse(loose.stdout) as {
      ok: boolean;
      checks: { check: string; status: string; detail: string }[];
    };
    expect(report.ok).toBe(false);
    expect(report.checks.find((c) => c.check === 'runtime dir')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('is 0755: other users can reach it'),
    });

    const elsewhere = join(home.path, 'elsewhere');
    mkdirSync(elsewhere, { mode: 0o700 });
    rmSync(join(home.path, 'runtime'), { recursive: true });
    symlinkSync(elsewhere, join(home.path, 'runtime'));
    const linked = await demiurge(['doctor', '--home', home.path]);
    expect(linked.code).toBe(1);
    expect(linked.stdout).toMatch(/^fail {2}runtime dir +\S+runtime is a symlink; it must be a real directory$/m);
  });

  it('doctor reports a missing home without creating it', async () => {
    const missing = join(home.path, 'nowhere');
    const run = await demiurge(['doctor', '--home', missing]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^fail {2}home {2}\S+nowhere does not exist; run "demiurge init"$/m);
    expect(existsSync(missing)).toBe(false);
  });

  it('a config.yaml with an unknown key is a configuration error: exit 2 in init, status and doctor', async () => {
    writeFileSync(join(home.path, 'config.yaml'), 'provider:\n  name: fake\nschedular:\n  enabled: false\n');
    // The key and the file, with a line number (which one is the host's loadConfig's business).
    const where = `${join(home.path, 'config.yaml')}:\\d+: schedular: unknown key`;
    const init = await demiurge(['init', '--home', home.path]);
    expect(init.code).toBe(2);
    expect(init.stderr).toMatch(new RegExp(`^demiurge: ${where}\\n$`));
    const status = await demiurge(['status', '--home', home.path]);
    expect(status.code).toBe(2);
    expect(status.stderr).toMatch(new RegExp(`^demiurge: ${where}\\n$`));
    const doctor = await demiurge(['doctor', '--home', home.path]);
    expect(doctor.code).toBe(2);
    expect(doctor.stdout).toMatch(new RegExp(`^fail {2}config +${where}$`, 'm'));
  });
});

describe('usage errors and missing stores (child process)', () => {
  it('exits 2 with one "demiurge:" line for usage errors', async () => {
    for (const [args, message] of [
      [['tasks', 'cancel'], "missing required argument 'id'"],
      [['runs', 'list', '--bogus'], "unknown option '--bogus'"],
      [['work', 'list', '--status', 'lost'], "argument 'lost' is invalid"],
      [['events', '--limit', 'x'], '--limit must be a whole number >= 0'],
      [
        ['work', 'resolve', 'wrk_1', '--decision', 'retry', '--retry-at', 'soon'],
        '--retry-at must be an ISO 8601 time',
      ],
    ] as const) {
      const run = await demiurge([...args, '--home', home.path]);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toMatch(new RegExp(`^demiurge: .*${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*\\n$`));
    }
  });

  it('a read command on a missing store is exit 1 with a clear message, and creates nothing', async () => {
    const missing = join(home.path, 'nowhere');
    for (const args of [['status'], ['runs', 'list'], ['work', 'show', 'wrk_1'], ['verify']]) {
      const run = await demiurge([...args, '--home', missing]);
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stderr).toBe(
        `demiurge: no runtime database at ${join(missing, 'runtime', 'runtime.sqlite3')}; run "demiurge init" (or pass --home) first\n`,
      );
    }
    expect(existsSync(missing)).toBe(false);
  });
});
