import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demiurge, demiurgeJson, tempHome } from './cli.js';
import { type Seeded, seedRuntime } from './seed.js';

// One home, read only: `demiurge demo` (a sample session) and then the runtimes' seed (see seed.ts).
let home: ReturnType<typeof tempHome>;
let seeded: Seeded;
let demoSessionId: string;
beforeAll(async () => {
  home = tempHome();
  const demo = await demiurgeJson<{ session: { sessionId: string } }>(['demo', '--sample', '--home', home.path]);
  demoSessionId = demo.json.session.sessionId;
  seeded = await seedRuntime(home.path);
});
afterAll(() => home.remove());

const read = <T>(...args: string[]) => demiurgeJson<T>([...args, '--home', home.path]).then((r) => r.json);

// Read only, so the tests run concurrently (each spawns its own CLI processes).
describe.concurrent('read commands on a seeded store (child process, --json)', () => {
  it('status: head, sessions, live runs with their lease, open approvals, tasks, work and what needs an operator', async () => {
    const status = await read<Record<string, unknown>>('status');
    expect(status).toMatchObject({
      home: home.path,
      head: expect.any(Number),
      config: { provider: 'fake', model: null, core: null },
      sessions: { active: 2, archived: 0, total: 2 },
      runs: {
        live: [
          {
            runId: seeded.liveRunId,
            sessionId: seeded.sessionId,
            status: 'running',
            owner: 'seed-host',
            leaseExpired: false,
          },
        ],
      },
      approvals: { open: [{ approvalId: seeded.approvalId, status: 'requested', tool: 'write_file' }] },
      tasks: { created: 2 },
      work: { 'delivery.send': { unknown: 1 } },
      deliveries: { webhook: { queued: 1 } },
      pendingCompletions: 0,
      needsOperator: [
        {
          aggregate: 'work',
          id: seeded.unknownWorkId,
          kind: 'delivery.send',
          status: 'unknown',
          reason: 'the webhook timed out after the request was sent',
          allowed: ['work.resolved'],
        },
      ],
      lastError: null,
    });
    const text = await demiurge(['status', '--home', home.path]);
    expect(text.stdout).toMatch(/^sessions {2}2 active, 0 archived$/m);
    expect(text.stdout).toMatch(
      new RegExp(`^ {2}${seeded.liveRunId} +${seeded.sessionId} +running +seed-host +until \\S+ \\(in \\d+m\\)$`, 'm'),
    );
    expect(text.stdout).toMatch(
      new RegExp(`^ {2}work ${seeded.unknownWorkId} {2}delivery\\.send {2}\\[unknown\\]`, 'm'),
    );
  });

  it('sessions list and show: the session, its transcript, turns and runs', async () => {
    const { sessions } = await read<{ sessions: { sessionId: string; title: string }[] }>('sessions', 'list');
    expect(sessions.map((s) => s.sessionId)).toEqual([demoSessionId, seeded.sessionId]);
    const shown = await read<{
      session: { sessionId: string; turnCount: number };
      transcript: { role: string; text: string }[];
      turns: { turnId: string; status: string; runId: string }[];
      runs: { runId: string; status: string }[];
    }>('sessions', 'show', seeded.sessionId);
    expect(shown.session).toMatchObject({ sessionId: seeded.sessionId, turnCount: 1, title: 'Seeded session' });
    expect(shown.transcript.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(shown.turns).toEqual([
      expect.objectContaining({ turnId: seeded.turnId, status: 'completed', runId: seeded.completedRunId }),
    ]);
    expect(shown.runs.map((r) => [r.runId, r.status])).toEqual([
      [seeded.completedRunId, 'completed'],
      [seeded.liveRunId, 'running'],
    ]);
    const missing = await demiurge(['sessions', 'show', 'ses_nope', '--home', home.path]);
    expect([missing.code, missing.stderr]).toEqual([1, 'demiurge: no session ses_nope\n']);
  });

  it('runs list (all, --live, --session) and show with turns, tool calls by step and approvals', async () => {
    const all = await read<{ runs: { runId: string }[] }>('runs', 'list');
    expect(all.runs.map((r) => r.runId)).toEqual([seeded.completedRunId, seeded.liveRunId]);
    const live = await read<{ runs: { runId: string; leaseUntil: string }[] }>(
      'runs',
      'list',
      '--live',
      '--session',
      seeded.sessionId,
    );
    expect(live.runs).toEqual([expect.objectContaining({ runId: seeded.liveRunId, owner: 'seed-host' })]);
    const other = await read<{ runs: unknown[] }>('runs', 'list', '--session', demoSessionId);
    expect(other.runs).toEqual([]);
    const shown = await read<{
      run: { runId: string; status: string };
      turns: {
        turnId: string;
        status: string;
        steps: { stepId: string; toolCalls: { toolCallId: string; tool: string; status: string }[] }[];
      }[];
      approvals: unknown[];
    }>('runs', 'show', seeded.completedRunId);
    expect(shown.run).toMatchObject({ runId: seeded.completedRunId, status: 'completed' });
    expect(shown.turns).toEqual([
      expect.objectContaining({
        turnId: seeded.turnId,
        status: 'completed',
        steps: [
          {
            stepId: 's1',
            toolCalls: [
              expect.objectContaining({ toolCallId: seeded.toolCallId, tool: 'list_dir', status: 'succeeded' }),
            ],
          },
        ],
      }),
    ]);
    expect(shown.approvals).toEqual([]);
    const text = await demiurge(['runs', 'show', seeded.completedRunId, '--home', home.path]);
    expect(text.stdout).toMatch(
      new RegExp(`^ {4}step s1\\n {6}${seeded.toolCallId} {2}list_dir \\{"path":"\\."\\} {2}\\[succeeded\\]`, 'm'),
    );
    const withApproval = await read<{ approvals: { approvalId: string }[] }>('runs', 'show', seeded.liveRunId);
    expect(withApproval.approvals.map((a) => a.approvalId)).toEqual([seeded.approvalId]);
  });

  it('tasks list (all sessions or one) and show', async () => {
    const { tasks } = await read<{ tasks: { taskId: string; status: string; lane: string; runId: string | null }[] }>(
      'tasks',
      'list',
    );
    expect(tasks.map((t) => [t.taskId, t.status, t.lane, t.runId])).toEqual([
      [seeded.childTaskId, 'created', 'active', seeded.liveRunId],
      [seeded.taskId, 'created', 'active', null],
    ]);
    const none = await read<{ tasks: unknown[] }>('tasks', 'list', '--session', demoSessionId);
    expect(none.tasks).toEqual([]);
    const { task } = await read<{ task: Record<string, unknown> }>('tasks', 'show', seeded.taskId);
    expect(task).toMatchObject({
      taskId: seeded.taskId,
      kind: 'terminal.exec',
      input: { command: 'sleep', args: ['60'] },
      allowed: expect.arrayContaining(['task.cancelled']),
    });
  });

  it('work list (--kind, --status) and show', async () => {
    const { work } = await read<{ work: { workId: string; status: string }[] }>(
      'work',
      'list',
      '--kind',
      'delivery.send',
      '--status',
      'unknown',
    );
    expect(work.map((w) => [w.workId, w.status])).toEqual([[seeded.unknownWorkId, 'unknown']]);
    expect((await read<{ work: unknown[] }>('work', 'list', '--status', 'queued')).work).toEqual([]);
    const shown = await read<{ work: Record<string, unknown> }>('work', 'show', seeded.unknownWorkId);
    expect(shown.work).toMatchObject({
      kind: 'delivery.send',
      status: 'unknown',
      attempts: 1,
      allowed: ['work.resolved'],
    });
  });

  it('events --stream and --type filter the log; NDJSON with --json', async () => {
    const byStream = await demiurge(['events', '--json', '--stream', seeded.liveRunId, '--home', home.path]);
    const events = byStream.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; streamId: string; streamVersion: number });
    expect(events.map((e) => [e.type, e.streamVersion])).toEqual([
      ['run.queued', 1],
      ['run.started', 2],
      ['run.owner_claimed', 3],
    ]);
    const typed = await demiurge([
      'events',
      '--type',
      'task.submitted',
      'work.unknown',
      '--from',
      '10',
      '--home',
      home.path,
    ]);
    const lines = typed.stdout.trim().split('\n');
    expect(lines.map((l) => l.trim().split(/\s+/)[2])).toEqual(['task.submitted', 'task.submitted', 'work.unknown']);
    expect(typed.stderr).toMatch(/^3 event\(s\) from position 10; head is \d+\n$/);
  });
});
