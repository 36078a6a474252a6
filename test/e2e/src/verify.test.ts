import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { demiurge, demiurgeJson, spawnDemiurge, tempHome } from './cli.js';
import { type Seeded, seedRuntime } from './seed.js';

let home: ReturnType<typeof tempHome>;
let seeded: Seeded;
beforeEach(async () => {
  home = tempHome();
  seeded = await seedRuntime(home.path);
});
afterEach(() => home.remove());

const db = () => join(home.path, 'runtime', 'runtime.sqlite3');
const sha = () => createHash('sha256').update(readFileSync(db())).digest('hex');
const cli = (...args: string[]) => demiurge([...args, '--home', home.path]);

interface VerifyJson {
  ok: boolean;
  head: number;
  log: { ok: boolean; eventsChecked: number; violationCount: number };
  invariants: { ok: boolean; findings: { invariant: string; subject: string; message: string }[] };
  projections: {
    ok: boolean;
    checked: string[];
    differenceCount: number;
    differences: {
      projector: string;
      collection: string;
      id: string;
      kind: string;
      fields: { path: string; live: unknown; rebuilt: unknown }[];
    }[];
  };
}

describe('verify, rebuild and events --follow (child process)', () => {
  it('verify passes on a good store and leaves the file as it was', async () => {
    const before = sha();
    const run = await cli('verify');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^ok {4}log: \d+ event\(s\) in \d+ stream\(s\) follow their lifecycle machines$/m);
    expect(run.stdout).toMatch(
      /^ok {4}invariants: ended-tasks-leave-active-lanes, deleted-tasks-hidden, terminal-runs-leave-no-active-tasks, live-runs-have-a-valid-owner-lease, turns-pinned-revisions-exist$/m,
    );
    expect(run.stdout).toMatch(/^ok {4}projections: 9 equal a fresh rebuild/m);
    expect(run.stdout).toMatch(/^verify: ok \(\d+ ms\)$/m);
    expect(sha()).toBe(before);
  });

  it('verify exits 1 with a precise report when a projection document was changed behind the store', async () => {
    const raw = new Database(db());
    const row = raw
      .prepare("SELECT doc FROM projection_documents WHERE projector = 'runs' AND collection = 'runs' AND id = ?")
      .get(seeded.liveRunId) as { doc: string };
    raw
      .prepare("UPDATE projection_documents SET doc = ? WHERE projector = 'runs' AND collection = 'runs' AND id = ?")
      .run(JSON.stringify({ ...JSON.parse(row.doc), status: 'paused' }), seeded.liveRunId);
    raw.prepare("DELETE FROM projection_documents WHERE projector = 'task-board' AND collection = 'board'").run();
    raw.close();
    const before = sha();
    const text = await cli('verify');
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(
      `fail  projections: 3 document(s) differ from a fresh rebuild\n        runs runs/${seeded.liveRunId}: differs from a rebuild: status: live "paused", rebuilt "running"\n`,
    );
    expect(text.stdout).toContain(
      `        task-board board/${seeded.sessionId}/active/${seeded.taskId}: missing from the live projection`,
    );
    expect(text.stdout).toMatch(/^verify: 3 problem\(s\) found$/m);
    const report = JSON.parse((await cli('verify', '--json')).stdout) as VerifyJson;
    expect(report).toMatchObject({ ok: false, log: { ok: true, violationCount: 0 }, invariants: { ok: true } });
    expect(report.projections.differences.map((d) => [d.projector, d.collection, d.kind])).toEqual([
      ['runs', 'runs', 'changed'],
      ['task-board', 'board', 'missing'],
      ['task-board', 'board', 'missing'],
    ]);
    expect(report.projections.differences[0]!.fields).toEqual([{ path: 'status', live: 'paused', rebuilt: 'running' }]);
    expect(sha()).toBe(before);
  });

  it('verify reports a live run whose owner lease ran out as an invariant finding', async () => {
    const stale = tempHome();
    try {
      const s = await seedRuntime(stale.path, { runLeaseMs: 1 });
      const run = await demiurge(['verify', '--json', '--home', stale.path]);
      expect(run.code).toBe(1);
      const report = JSON.parse(run.stdout) as VerifyJson;
      expect(report.projections.ok).toBe(true);
      expect(report.invariants.findings).toEqual([
        {
          invariant: 'live-runs-have-a-valid-owner-lease',
          subject: s.liveRunId,
          message: expect.stringMatching(
            new RegExp(
              `^run ${s.liveRunId} is running but its owner seed-host's lease expired at \\S+ \\(a host must recover it\\)$`,
            ),
          ),
        },
      ]);
    } finally {
      stale.remove();
    }
  });

  it('rebuild --projector rebuilds only that projection; an unknown one is exit 2 naming them', async () => {
    const one = await demiurgeJson<{ rebuilt: string[]; projections: { name: string }[]; eventsApplied: number }>([
      'rebuild',
      '--projector',
      'task-board',
      '--home',
      home.path,
    ]);
    expect(one.json.rebuilt).toEqual(['task-board']);
    expect(one.json.projections.map((p) => p.name)).toEqual(['task-board']);
    expect(one.stderr).toBe('');
    const text = await cli('rebuild', '--projector', 'runs');
    expect(text.stdout).toMatch(
      /^rebuilt 1 projection\(s\) from \d+ events \(\d+ applied\) in \d+ ms\nprojection runs v\d+ at position \d+: /,
    );
    expect(text.stderr).toBe('');
    const unknown = await cli('rebuild', '--projector', 'task-boards');
    expect([unknown.code, unknown.stderr]).toEqual([
      2,
      'demiurge: unknown projector "task-boards"; projectors: sessions, runs, task-board, work-items, outbox, operator-status, slot-runs, schedule-instances, mcp-servers\n',
    ]);
  });

  it('events --follow prints the history, then events another process commits, until SIGTERM or stdin closes', async () => {
    const follow = spawnDemiurge(['events', '--follow', '--json', '--stream', seeded.taskId, '--home', home.path]);
    const history = await follow.lines(1);
    expect(JSON.parse(history[0]!)).toMatchObject({ type: 'task.submitted', streamId: seeded.taskId });
    expect((await cli('tasks', 'cancel', seeded.taskId)).code).toBe(0);
    const live = await follow.lines(3);
    expect(live.slice(1).map((l) => (JSON.parse(l) as { type: string }).type)).toEqual([
      'task.cancelled',
      'task.completion_ready',
    ]);
    follow.child.kill('SIGTERM');
    expect(await follow.exited).toMatchObject({ code: 0, stderr: '' });

    const typed = spawnDemiurge(['events', '--follow', '--type', 'run.paused', '--home', home.path]);
    expect((await cli('runs', 'pause', seeded.liveRunId)).code).toBe(0);
    const [line] = await typed.lines(1);
    expect(line).toMatch(new RegExp(`^\\s+\\d+ {2}\\S+ {2}run\\.paused +${seeded.liveRunId}@4 `));
    typed.child.stdin!.end();
    const done = await typed.exited;
    expect(done.code).toBe(0);
    expect(done.stderr).toMatch(/following the log from position 1 \(Ctrl-C to stop\)/);
  });
});
