import { StreamVersionConflictError } from '@demiurge/event-store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { completionWorkId, OutOfScopeError } from '../src/index.js';
import { openRuntime, type Runtime } from './harness.js';

let rt: Runtime;
beforeEach(async () => {
  rt = await openRuntime();
});
afterEach(() => rt.dispose());

const session = (): string => rt.ids.next('ses');

async function startedTask(sessionId: string, notifyPolicy?: 'silent') {
  const task = await rt.tasks.submitTask({
    sessionId,
    kind: 'terminal.exec',
    title: 'build it',
    input: { command: 'make' },
    ...(notifyPolicy ? { notifyPolicy } : {}),
  });
  const ref = { sessionId, taskId: task.taskId };
  await rt.tasks.startTask(ref, 'worker-1');
  return ref;
}

describe('completion notices', () => {
  it('a blocked task notifies that it needs the user; its end notifies again; one admission takes both', async () => {
    const sessionId = session();
    const ref = await startedTask(sessionId);
    await rt.tasks.blockTask(ref, 'the user must enter the deploy password', true);
    const blocked = await rt.host.pendingTaskCompletions({ sessionId });
    expect(blocked).toHaveLength(1);
    expect(blocked[0]).toMatchObject({ taskId: ref.taskId, outcome: 'blocked', orphaned: false });
    expect(blocked[0]!.workId).not.toBe(completionWorkId(ref.taskId));
    expect(blocked[0]!.text).toContain('[task blocked]');
    expect(blocked[0]!.text).toContain('needs the user: the user must enter the deploy password');
    expect((await rt.host.status()).pendingCompletions).toHaveLength(1);

    await rt.tasks.resumeTask(ref);
    await rt.tasks.completeTask(ref, { summary: 'built 3 targets', exitCode: 0 });
    const both = await rt.host.pendingTaskCompletions({ sessionId });
    expect(both.map((n) => n.outcome)).toEqual(['blocked', 'completed']);
    expect(both[1]!.text).toMatch(/\[task completion\] Task tsk_\w+ "build it" \(terminal.exec\) completed\./);
    expect(both[1]!.text).toContain('Summary: built 3 targets');
    expect(both[1]!.text).toContain('Exit code: 0');
    // Another session sees none of them.
    expect(await rt.host.pendingTaskCompletions({ sessionId: session() })).toEqual([]);

    const taken = await rt.host.takeTaskCompletions({ sessionId, via: 'turn trn_x' });
    expect(taken.notices.map((n) => n.outcome)).toEqual(['blocked', 'completed']);
    const head = await rt.store.head();
    await rt.store.append([...taken.streams]);
    const appended = (await rt.store.readAll()).filter((e) => e.position > head);
    // One commit: both work items claimed and acknowledged, both acknowledgements on the task.
    expect(appended.map((e) => e.type).sort()).toEqual(
      [
        'work.claimed',
        'work.acknowledged',
        'work.claimed',
        'work.acknowledged',
        'task.completion_acknowledged',
        'task.completion_acknowledged',
      ].sort(),
    );
    expect(new Set(appended.map((e) => e.recordedAt)).size).toBe(1);
    expect(await rt.host.pendingTaskCompletions()).toEqual([]);
    expect((await rt.host.status()).pendingCompletions).toEqual([]);
    expect((await rt.work.get(both[0]!.workId)).status).toBe('acknowledged');
    expect(await rt.tasks.getTask(ref)).toMatchObject({ completion: 'acknowledged' });
  });

  it('silent tasks never notify, blocked or ended', async () => {
    const sessionId = session();
    const ref = await startedTask(sessionId, 'silent');
    await rt.tasks.blockTask(ref, 'needs the user', true);
    await rt.tasks.resumeTask(ref);
    await rt.tasks.completeTask(ref, { exitCode: 0 });
    expect(await rt.host.pendingTaskCompletions()).toEqual([]);
    expect((await rt.store.readAll()).filter((e) => e.type === 'task.completion_ready')).toEqual([]);
  });

  it('deleting or archiving a task settles its pending notices in the same commit', async () => {
    const sessionId = session();
    const cancelled = await startedTask(sessionId);
    await rt.tasks.cancelTask(cancelled, 'not needed');
    const done = await startedTask(sessionId);
    await rt.tasks.completeTask(done, { exitCode: 0 });
    expect((await rt.host.status()).pendingCompletions).toHaveLength(2);

    const head = await rt.store.head();
    await rt.tasks.deleteTask(cancelled, 'cleanup');
    const deleteCommit = (await rt.store.readAll()).filter((e) => e.position > head);
    expect(deleteCommit.map((e) => e.type)).toEqual(['task.deleted', 'work.cancelled']);
    expect((await rt.work.get(completionWorkId(cancelled.taskId))).status).toBe('cancelled');
    await rt.tasks.archiveTask(done);
    expect((await rt.work.get(completionWorkId(done.taskId))).status).toBe('cancelled');

    expect(await rt.host.pendingTaskCompletions()).toEqual([]);
    expect((await rt.host.status()).pendingCompletions).toEqual([]);
    expect((await rt.host.status()).counts['work/task.completion/queued']).toBeUndefined();
    // An acknowledged notice is left as it is.
    const acked = await startedTask(sessionId);
    await rt.tasks.completeTask(acked);
    await rt.store.append([...(await rt.host.takeTaskCompletions({ sessionId, via: 'test' })).streams]);
    await rt.tasks.archiveTask(acked);
    expect((await rt.work.get(completionWorkId(acked.taskId))).status).toBe('acknowledged');
  });

  it('refuses an acknowledgement from outside the origin session with a typed error, changing nothing', async () => {
    const sessionId = session();
    const ref = await startedTask(sessionId);
    await rt.tasks.completeTask(ref, { exitCode: 0 });
    const [pending] = await rt.host.claimTaskCompletions({ limit: 5 });
    const head = await rt.store.head();
    const other = session();
    const refused = await rt.host
      .acknowledgeTaskCompletion(pending!.claim, { sessionId: other, via: 'yield_until' })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OutOfScopeError);
    expect(refused).toMatchObject({ code: 'out_of_scope', taskId: ref.taskId, scope: sessionId, presented: other });
    expect((refused as Error).message).toMatch(
      new RegExp(`belongs to session ${sessionId}; session ${other} \\(yield_until\\) cannot acknowledge it`),
    );
    expect(await rt.store.head()).toBe(head);
    await rt.host.acknowledgeTaskCompletion(pending!.claim, { sessionId, via: 'yield_until' });
    expect(await rt.tasks.getTask(ref)).toMatchObject({ completion: 'acknowledged' });
  });

  it('a consumer that moves first makes the taken streams conflict: never delivered twice', async () => {
    const sessionId = session();
    const ref = await startedTask(sessionId);
    await rt.tasks.completeTask(ref, { exitCode: 1 });
    const taken = await rt.host.takeTaskCompletions({ sessionId, via: 'turn a' });
    const claim = await rt.work.claim(completionWorkId(ref.taskId));
    await rt.host.acknowledgeTaskCompletion(claim, { sessionId, via: 'yield_until' });
    await expect(rt.store.append([...taken.streams])).rejects.toBeInstanceOf(StreamVersionConflictError);
    expect((await rt.store.readAll()).filter((e) => e.type === 'task.completion_acknowledged')).toHaveLength(1);
    expect((await rt.host.takeTaskCompletions({ sessionId, via: 'turn b' })).notices).toEqual([]);
  });

  it('a notice whose claimant died is taken once its lease ran out', async () => {
    const sessionId = session();
    const ref = await startedTask(sessionId);
    await rt.tasks.failTask(ref, { code: 'exit', message: 'exited 2' }, 2);
    await rt.host.claimTaskCompletions({ limit: 5 }); // a consumer that then died
    expect(await rt.host.pendingTaskCompletions()).toEqual([]);
    rt.clock.advance(11_000);
    const [notice] = await rt.host.pendingTaskCompletions({ sessionId });
    expect(notice!.text).toContain('Error: exit: exited 2');
    expect(notice!.text).toContain('Exit code: 2');
    const taken = await rt.host.takeTaskCompletions({ sessionId, via: 'turn c' });
    await rt.store.append([...taken.streams]);
    expect((await rt.work.get(notice!.workId)).status).toBe('acknowledged');
  });
});
