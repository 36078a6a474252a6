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

interface StatusJson {
  head: number;
  pendingCompletions: number;
  work: Record<string, Record<string, number>>;
}
interface TaskJson {
  task: { taskId: string; status: string; completion: string };
  acknowledged?: number;
}

describe('completion notices at the CLI (child process)', () => {
  it('a deleted task’s notice is settled: status stops counting it, the work item is cancelled', async () => {
    await json('tasks', 'cancel', seeded.childTaskId, '--reason', 'not needed');
    let status = await json<StatusJson>('status');
    expect(status.pendingCompletions).toBe(1);
    expect(status.work['task.completion']).toEqual({ queued: 1 });

    await json('tasks', 'delete', seeded.childTaskId);
    status = await json<StatusJson>('status');
    expect(status.pendingCompletions).toBe(0);
    expect(status.work['task.completion']).toEqual({ cancelled: 1 });
    const text = await cli('status');
    expect(text.stdout).toContain('completions pending: 0');
    expect(text.stdout).toContain('  task.completion: cancelled 1');
    await recordGolden('e2e-completion-notice', home.path);
  });

  it('an acknowledgement outside the task’s session is refused with one clear line; its own session may', async () => {
    await json('tasks', 'cancel', seeded.taskId, '--reason', 'not needed');
    const before = await json<StatusJson>('status');
    expect(before.pendingCompletions).toBe(1);
    const other = 'ses_01JD5Y7Q6N0000000000000000';

    const refused = await cli('tasks', 'ack', seeded.taskId, '--session', other);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(
      `demiurge: the completion of task ${seeded.taskId} belongs to session ${seeded.sessionId}; ` +
        `session ${other} (operator (cli)) cannot acknowledge it: a completion is acknowledged only in the ` +
        'session that submitted the task; nothing was changed\n',
    );
    const after = await json<StatusJson>('status');
    expect(after.head).toBe(before.head);
    expect(after.pendingCompletions).toBe(1);

    const acked = await json<TaskJson>('tasks', 'ack', seeded.taskId, '--session', seeded.sessionId);
    expect(acked).toMatchObject({ acknowledged: 1, task: { taskId: seeded.taskId, completion: 'acknowledged' } });
    const settled = await json<StatusJson>('status');
    expect(settled.pendingCompletions).toBe(0);
    expect(settled.work['task.completion']).toEqual({ acknowledged: 1 });
    const log = await demiurge(['events', '--json', '--stream', seeded.taskId, '--home', home.path]);
    const ack = log.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> })
      .find((e) => e.type === 'task.completion_acknowledged');
    expect(ack?.data).toMatchObject({ consumer: `session ${seeded.sessionId} (operator (cli))` });
    // Repeating it acknowledges nothing more.
    expect((await cli('tasks', 'ack', seeded.taskId, '--session', seeded.sessionId)).stdout).toBe(
      `task ${seeded.taskId}: 0 notices acknowledged for session ${seeded.sessionId}, completion acknowledged\n`,
    );
  });
});
