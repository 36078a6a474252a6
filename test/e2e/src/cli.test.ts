import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { demiurge, tempHome } from './cli.js';

let home: ReturnType<typeof tempHome>;
beforeEach(() => {
  home = tempHome();
});
afterEach(() => home.remove());

const db = () => join(home.path, 'runtime', 'runtime.sqlite3');

describe('demiurge CLI (child process)', () => {
  it('demo creates the store under the home, appends a session and prints its projections', async () => {
    const run = await demiurge(['demo', '--sample', '--home', home.path]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`store    ${db()}`);
    expect(run.stdout).toMatch(/log {6}9 events; rebuilt 9 into 9 projection\(s\)/);
    expect(run.stdout).toMatch(/session ses_[0-9A-Z]{26} {2}"Demo: planning a trip" {2}\[active\]/);
    expect(run.stdout).toContain('assistant About 180 EUR');
    expect(run.stdout).toMatch(/projection sessions v\d+ at position 9: bindings=1 messages=4 sessions=1 turns=2/);
    const again = await demiurge(['demo', '--sample', '--json'], { DEMIURGE_HOME: home.path });
    const report = JSON.parse(again.stdout) as { head: number; sessions: number; transcript: unknown[] };
    expect(report).toMatchObject({ head: 18, sessions: 2 });
    expect(report.transcript).toHaveLength(4);
  });

  it('events prints the log as text or NDJSON, from a position', async () => {
    await demiurge(['demo', '--sample', '--home', home.path]);
    const json = await demiurge(['events', '--json', '--home', home.path]);
    expect(json.code).toBe(0);
    const events = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { position: number; type: string; streamVersion: number });
    expect(events.map((e) => e.position)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(events[0]).toMatchObject({ type: 'session.created', streamVersion: 1 });
    const from = await demiurge(['events', '--from', '8', '--home', home.path]);
    expect(from.stdout.trim().split('\n')).toHaveLength(2);
    expect(from.stdout).toMatch(/^\s+8 {2}\S+ {2}message\.recorded/);
    expect(from.stderr).toContain('2 event(s) from position 8; head is 9');
    const typed = await demiurge(['events', '--json', '--type', 'turn.completed', '--home', home.path]);
    expect(typed.stdout.trim().split('\n')).toHaveLength(2);
  });

  it('rebuild replays the log into projections equal to the live ones', async () => {
    await demiurge(['demo', '--sample', '--home', home.path]);
    const raw = new Database(db(), { readonly: true });
    const before = raw.prepare('SELECT collection, id, doc FROM projection_documents ORDER BY 1, 2').all();
    raw.close();
    const run = await demiurge(['rebuild', '--json', '--home', home.path]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as { projections: { name: string; position: number }[] };
    expect(report).toMatchObject({
      head: 9,
      rebuilt: [
        'sessions',
        'runs',
        'task-board',
        'work-items',
        'outbox',
        'operator-status',
        'slot-runs',
        'schedule-instances',
        'mcp-servers',
      ],
    });
    expect(report.projections.map((p) => [p.name, p.position])).toEqual(
      [
        'sessions',
        'runs',
        'task-board',
        'work-items',
        'outbox',
        'operator-status',
        'slot-runs',
        'schedule-instances',
        'mcp-servers',
      ].map((n) => [n, 9]),
    );
    const after = new Database(db(), { readonly: true });
    expect(after.prepare('SELECT collection, id, doc FROM projection_documents ORDER BY 1, 2').all()).toEqual(before);
    after.close();
    const text = await demiurge(['rebuild', '--home', home.path]);
    expect(text.stdout).toContain('rebuilt 9 projection(s) from 9 events');
  });

  it('refuses a garbage database with a clear message, no stack, and leaves it untouched', async () => {
    mkdirSync(join(home.path, 'runtime'), { recursive: true });
    writeFileSync(db(), 'not a database at all'.repeat(100));
    const sha = () => createHash('sha256').update(readFileSync(db())).digest('hex');
    const before = sha();
    for (const args of [['demo'], ['events'], ['rebuild'], ['status'], ['verify']]) {
      const run = await demiurge([...args, '--home', home.path]);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        /^demiurge: .*runtime\.sqlite3 is not a usable Demiurge database \(not an SQLite file: its header is wrong\)/,
      );
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }
    expect(sha()).toBe(before);
  });

  it('explains a missing database and usage errors', async () => {
    const missing = await demiurge(['events', '--home', home.path]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no runtime database at');
    const bad = await demiurge(['events', '--from', 'zero', '--home', home.path]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--from must be a whole number >= 1');
    const unknown = await demiurge(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
  });
});

describe('demiurge demo (the scripted scenario)', () => {
  it('runs tools, delegation, plan mode, a cancel, a crash and its recovery, then rebuild and verify', async () => {
    const home = tempHome();
    try {
      const run = await demiurge(['demo', '--json', '--home', home.path]);
      expect(run.code).toBe(0);
      const report = JSON.parse(run.stdout) as {
        chapters: { title: string; lines: string[] }[];
        verify: { ok: boolean };
      };
      expect(report.chapters.map((c) => c.title.split('.')[0])).toEqual(['1', '2', '3a', '3b', '4', '5', '6', '7']);
      const text = JSON.stringify(report.chapters);
      // The child agent answers from its own script steps (it read the plan), not with its parent's next line.
      const delegation = report.chapters.find((c) => c.title.startsWith('2.'))!.lines.join('\n');
      expect(delegation).toMatch(
        /agent\.spawn "List three risks of the Lisbon plan\." -> completed: Risks: Alfama is steep on foot/,
      );
      expect(delegation).not.toContain('A child agent and a build are running');
      expect(text).toContain('write_file -> denied by plan_mode');
      expect(text).toContain('write_file -> succeeded');
      expect(text).toMatch(/cancelled \(the user pressed stop; resumable: false\)/);
      expect(text).toContain('shell -> unknown');
      expect(text).toMatch(/effects\.log has [01] line\(s\): the call was never run twice/);
      // The killed host's `sleep 30` was left running: the new host's start stopped it (start marker checked).
      expect(text).toMatch(/its shell process group \(pid \d+\), left running by the killed host, was stopped/);
      expect(report.verify.ok).toBe(true);
    } finally {
      home.remove();
    }
  });
});
