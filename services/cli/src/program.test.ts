import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { workLifecycle } from '@demiurge/lifecycle';
import { afterEach, describe, expect, it } from 'vitest';
import { WORK_STATUSES } from './commands/work.command.js';
import { resolveHome, runCli } from './index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempHome = () => {
  const d = mkdtempSync(join(tmpdir(), 'demiurge-cli-'));
  dirs.push(d);
  return d;
};
const capture = () => {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (t: string) => out.push(t), err: (t: string) => err.push(t) } };
};

describe('home resolution', () => {
  it('takes --home, then $DEMIURGE_HOME, then ~/.demiurge', () => {
    expect(resolveHome('/srv/d', { DEMIURGE_HOME: '/x' }).database).toBe('/srv/d/runtime/runtime.sqlite3');
    expect(resolveHome(undefined, { DEMIURGE_HOME: '/x' }).home).toBe('/x');
    expect(resolveHome(undefined, {}).home).toBe(join(homedir(), '.demiurge'));
  });
});

describe('runCli', () => {
  it('runs demo then events in one process and returns exit codes', async () => {
    const home = tempHome();
    const demo = capture();
    expect(await runCli(['demo', '--sample', '--json', '--home', home], demo.io)).toBe(0);
    const report = JSON.parse(demo.out.join('\n')) as {
      head: number;
      session: { turnCount: number; messageCount: number };
    };
    expect(report.head).toBe(9);
    expect(report.session).toMatchObject({ turnCount: 2, messageCount: 4, status: 'active' });
    const events = capture();
    expect(await runCli(['events', '--json', '--from', '9', '--home', home], events.io)).toBe(0);
    expect(events.out.map((l) => JSON.parse(l).type)).toEqual(['turn.completed']);
  });

  it('turns a runtime refusal into one line and exit 1, a usage error into exit 2', async () => {
    const missing = capture();
    expect(await runCli(['rebuild', '--home', join(tempHome(), 'nowhere')], missing.io)).toBe(1);
    expect(missing.err).toEqual([expect.stringMatching(/^demiurge: no runtime database at .*nowhere/)]);
    const usage = capture();
    expect(await runCli(['events', '--limit', '-3'], usage.io)).toBe(2);
    expect(usage.err.join('\n')).toContain('--limit must be a whole number >= 0');
    const help = capture();
    expect(await runCli(['--help'], help.io)).toBe(0);
    expect(help.out.join('\n')).toMatch(
      /init .*status .*sessions .*runs .*tasks .*work .*events .*rebuild .*verify .*doctor .*demo/s,
    );
  });
});

describe('exit codes and error lines', () => {
  it('formats a usage error as one "demiurge:" line and exits 2', async () => {
    const run = capture();
    expect(await runCli(['tasks', 'archive', 'tsk_x', '--reason', 'r'], run.io)).toBe(2);
    expect(run.err).toEqual([
      expect.stringMatching(/^demiurge: unknown option '--reason'.*\(run "demiurge --help" for usage\)$/),
    ]);
    const choice = capture();
    expect(await runCli(['work', 'resolve', 'wrk_x', '--decision', 'maybe'], choice.io)).toBe(2);
    expect(choice.err.join('\n')).toContain("argument 'maybe' is invalid. Allowed choices are sent, failed, retry.");
  });

  it('refuses an unknown projector with exit 2 before it looks for a store', async () => {
    const run = capture();
    expect(await runCli(['rebuild', '--projector', 'nope', '--home', join(tempHome(), 'nowhere')], run.io)).toBe(2);
    expect(run.err).toEqual([
      'demiurge: unknown projector "nope"; projectors: sessions, runs, task-board, work-items, outbox, operator-status, slot-runs, schedule-instances, mcp-servers',
    ]);
  });

  it('maps a bad config.yaml to exit 2 in init, status and doctor', async () => {
    const home = tempHome();
    writeFileSync(join(home, 'config.yaml'), 'provider:\n  name: fake\nstore:\n  synchronus: FULL\n');
    for (const args of [['init'], ['status'], ['doctor']]) {
      const run = capture();
      expect(await runCli([...args, '--home', home], run.io)).toBe(2);
      expect([...run.err, ...run.out].join('\n')).toContain(
        `${join(home, 'config.yaml')}:4: store.synchronus: unknown key`,
      );
    }
  });

  it('draws a progress bar for rebuild on a terminal', async () => {
    const home = tempHome();
    expect(await runCli(['demo', '--sample', '--home', home], capture().io)).toBe(0);
    let drawn = '';
    const terminal = Object.assign(new PassThrough(), { isTTY: true, columns: 100 });
    terminal.on('data', (d: Buffer) => (drawn += d.toString()));
    const run = capture();
    const io = { ...run.io, progress: terminal as unknown as NodeJS.WriteStream };
    expect(await runCli(['rebuild', '--projector', 'sessions', '--home', home], io)).toBe(0);
    expect(drawn).toMatch(/rebuild \[[█░]+\] 100% \| 9\/9/);
    expect(run.out[0]).toMatch(/^rebuilt 1 projection\(s\) from 9 events \(9 applied\) in \d+ ms$/);
  });
});

describe('command definitions', () => {
  it('offer exactly the work machine states (but none) as --status choices', () => {
    expect([...WORK_STATUSES].sort()).toEqual(workLifecycle.states.filter((s) => s !== 'none').sort());
  });
});
