import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { demiurge, demiurgeJson, tempHome } from './cli.js';
import { recordGolden } from './golden-record.js';
import { type Seeded, seedRuntime } from './seed.js';

let home: ReturnType<typeof tempHome>;
let seeded: Seeded;
beforeEach(async () => {
  home = tempHome();
  seeded = await seedRuntime(home.path);
});
afterEach(() => home.remove());

const cli = (...args: string[]) => demiurge([...args, '--home', home.path]);
const json = <T>(...args: string[]) => demiurgeJson<T>([...args, '--home', home.path]).then((r) => r.json);
interface TaskJson {
  task: { taskId: string; status: string; lane: string | null; hidden: boolean; cancelReason: string | null };
}

describe('admin commands (child process)', () => {
  it('tasks: delete is refused until cancelled; cancel → delete hides it → archive', async () => {
    const early = await cli('tasks', 'delete', seeded.taskId);
    expect([early.code, early.stderr]).toEqual([
      1,
      `demiurge: task ${seeded.taskId} is created; task.deleted is not allowed; allowed: task.started, task.cancelled, task.log\n`,
    ]);
    const cancelled = await json<TaskJson>('tasks', 'cancel', seeded.taskId, '--reason', 'not needed');
    expect(cancelled.task).toMatchObject({
      status: 'cancelled',
      lane: 'done',
      hidden: false,
      cancelReason: 'not needed',
    });
    const deleted = await cli('tasks', 'delete', seeded.taskId);
    expect(deleted.stdout).toBe(`task ${seeded.taskId}: deleted, lane -, hidden\n`);
    const visible = await json<{ tasks: { taskId: string }[] }>('tasks', 'list');
    expect(visible.tasks.map((t) => t.taskId)).toEqual([seeded.childTaskId]);
    const all = await json<{ tasks: { taskId: string; hidden: boolean }[] }>(
      'tasks',
      'list',
      '--all',
      '--session',
      seeded.sessionId,
    );
    expect(all.tasks.map((t) => [t.taskId, t.hidden])).toEqual([
      [seeded.childTaskId, false],
      [seeded.taskId, true],
    ]);
    const archived = await json<TaskJson>('tasks', 'archive', seeded.taskId);
    expect(archived.task).toMatchObject({ status: 'archived', lane: null, hidden: true });
    const log = await demiurge(['events', '--json', '--stream', seeded.taskId, '--home', home.path]);
    const events = log.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; meta: { actor: unknown } });
    expect(events.map((e) => e.type)).toEqual([
      'task.submitted',
      'task.cancelled',
      'task.completion_ready',
      'task.deleted',
      'task.archived',
    ]);
    expect(events[1]!.meta.actor).toEqual({ kind: 'operator', id: 'cli' });
    await recordGolden('e2e-task-admin', home.path);
  });

  it('work resolve settles an unknown item once; an item that is not unknown is refused', async () => {
    const resolved = await json<{ work: { status: string } }>(
      'work',
      'resolve',
      seeded.unknownWorkId,
      '--decision',
      'retry',
      '--retry-at',
      '2030-01-01T00:00:00Z',
      '--note',
      'the webhook log shows nothing',
    );
    expect(resolved.work).toMatchObject({ status: 'retry_scheduled', nextAttemptAt: '2030-01-01T00:00:00.000Z' });
    const again = await cli('work', 'resolve', seeded.unknownWorkId, '--decision', 'sent');
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      new RegExp(
        `^demiurge: work(?: item)? ${seeded.unknownWorkId} is retry_scheduled; work\\.resolved is not allowed`,
      ),
    );
    const status = await json<{ needsOperator: unknown[] }>('status');
    expect(status.needsOperator).toEqual([]);
    const missing = await cli('work', 'resolve', 'wrk_nope', '--decision', 'sent');
    expect([missing.code, missing.stderr]).toEqual([1, 'demiurge: no work item wrk_nope\n']);
  });

  it('runs pause, resume and cancel go through the run machine and print the new state', async () => {
    const paused = await cli('runs', 'pause', seeded.liveRunId, '--reason', 'lunch');
    expect(paused.stdout).toBe(
      `run ${seeded.liveRunId}: paused (lunch)\n` +
        '  its owner finishes the step under way (a running tool call completes and is recorded), then waits\n',
    );
    const resumed = await json<{ run: { status: string; reason: string | null } }>('runs', 'resume', seeded.liveRunId);
    expect(resumed.run).toMatchObject({ status: 'running', reason: null });
    const cancelling = await json<{ run: { status: string; reason: string } }>(
      'runs',
      'cancel',
      seeded.liveRunId,
      '--reason',
      'wrong plan',
    );
    expect(cancelling.run).toMatchObject({ status: 'cancelling', reason: 'wrong plan' });
    const finished = await cli('runs', 'resume', seeded.completedRunId);
    expect([finished.code, finished.stderr]).toEqual([
      1,
      `demiurge: run ${seeded.completedRunId} cannot be resumed: it is completed\n`,
    ]);
  });
});
