import { mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
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
    expect(await runCli(['demo', '--json', '--home', home], demo.io)).toBe(0);
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
    expect(help.out.join('\n')).toMatch(/demo .*events .*rebuild/s);
  });
});
