import { IdPrefix } from '@demiurge/contracts';
import { IllegalTransitionError } from '@demiurge/lifecycle';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidSpecError, NotFoundError, NotResumableError, UnknownKindError } from '../src/index.js';
import { openRuntime, type Runtime } from './harness.js';

let rt: Runtime;
beforeEach(async () => {
  rt = await openRuntime();
});
afterEach(() => rt.dispose());

const session = (): string => rt.ids.next('ses');
const exec = (sessionId: string, command = 'ls') => ({
  sessionId,
  kind: 'terminal.exec',
  title: `run ${command}`,
  input: { command },
});

describe('RuntimeControlPlane', () => {
  it('submits a task, runs it to completion and announces the completion through durable work', async () => {
    const sessionId = session();
    const task = await rt.tasks.submitTask(exec(sessionId));
    expect(task).toMatchObject({
      sessionId,
      kind: 'terminal.exec',
      status: 'created',
      lane: 'active',
      input: { command: 'ls', args: [] },
    });
    await rt.tasks.startTask({ sessionId, taskId: task.taskId }, 'worker-1');
    await rt.tasks.logTask({ sessionId, taskId: task.taskId }, 'stdout', 'file.txt');
    const done = await rt.tasks.completeTask({ sessionId, taskId: task.taskId }, { exitCode: 0 });
    expect(done).toMatchObject({ status: 'completed', lane: 'done', completion: 'ready', exitCode: 0 });
    const [pending] = await rt.host.claimTaskCompletions({ limit: 5 });
    expect(pending?.taskId).toBe(task.taskId);
    await rt.host.acknowledgeTaskCompletion(pending!.claim, { sessionId, via: 'test' });
    expect(await rt.tasks.getTask({ sessionId, taskId: task.taskId })).toMatchObject({ completion: 'acknowledged' });
    expect((await rt.work.get(pending!.claim.workId)).status).toBe('acknowledged');
    expect(await rt.host.claimTaskCompletions({ limit: 5 })).toEqual([]);
  });

  it('refuses other kinds, invalid specs and foreign sessions with typed errors, appending nothing', async () => {
    const sessionId = session();
    const head = await rt.store.head();
    await expect(rt.tasks.submitTask({ ...exec(sessionId), kind: 'tool.call' })).rejects.toBeInstanceOf(
      UnknownKindError,
    );
    await expect(rt.tasks.submitTask({ ...exec(sessionId), kind: 'tool.call' })).rejects.toThrow(
      /"tool.call" is not a task kind; task kinds: agent.spawn, terminal.exec, evolver.run, schedule.fire/,
    );
    const badInput = await rt.tasks.submitTask({ ...exec(sessionId), input: { command: '' } }).catch((e: unknown) => e);
    expect(badInput).toBeInstanceOf(InvalidSpecError);
    expect(badInput).toMatchObject({ path: ['input', 'command'] });
    await expect(rt.tasks.submitTask({ ...exec(sessionId), sessionId: 'nope' })).rejects.toMatchObject({
      name: 'InvalidSpecError',
      path: ['sessionId'],
    });
    expect(await rt.store.head()).toBe(head);
    const task = await rt.tasks.submitTask(exec(sessionId));
    const other = session();
    const before = await rt.store.head();
    await expect(rt.tasks.getTask({ sessionId: other, taskId: task.taskId })).rejects.toBeInstanceOf(NotFoundError);
    await expect(rt.tasks.cancelTask({ sessionId: other, taskId: task.taskId }, 'mine now')).rejects.toThrow(
      `no task ${task.taskId}`,
    );
    await expect(rt.tasks.getTask({ sessionId, taskId: `tsk_${'1'.repeat(26)}` })).rejects.toThrow(/no task tsk_1+/);
    expect(await rt.tasks.listTasks(other)).toEqual([]);
    expect(await rt.store.head()).toBe(before);
  });

  it('refuses illegal transitions naming the allowed events; repeated cancel/delete/archive append nothing', async () => {
    const sessionId = session();
    const { taskId } = await rt.tasks.submitTask(exec(sessionId));
    const ref = { sessionId, taskId };
    const err = await rt.tasks.resumeTask(ref).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IllegalTransitionError);
    expect((err as Error).message).toBe(
      `task ${taskId} is created; task.resumed is not allowed; allowed: task.started, task.cancelled, task.log`,
    );
    await rt.tasks.cancelTask(ref, 'changed my mind');
    const afterCancel = await rt.store.head();
    expect(await rt.tasks.cancelTask(ref, 'again')).toMatchObject({
      status: 'cancelled',
      lane: 'done',
      cancelReason: 'changed my mind',
    });
    expect(await rt.store.head()).toBe(afterCancel);
    await rt.tasks.deleteTask(ref);
    await rt.tasks.deleteTask(ref);
    await rt.tasks.cancelTask(ref, 'cancel a deleted task: still a no-op');
    // task.deleted and the settlement of its pending completion notice (work.cancelled), in one commit.
    expect(await rt.store.head()).toBe(afterCancel + 2);
    await expect(rt.tasks.startTask(ref, 'w')).rejects.toThrow(
      `task ${taskId} is deleted; task.started is not allowed; allowed: task.archived`,
    );
    expect(await rt.tasks.listTasks(sessionId)).toEqual([]);
    expect(await rt.tasks.listTasks(sessionId, { includeHidden: true })).toMatchObject([
      { taskId, status: 'deleted', hidden: true, lane: null },
    ]);
    await rt.tasks.archiveTask(ref);
    await rt.tasks.archiveTask(ref);
    expect(await rt.store.head()).toBe(afterCancel + 3);
  });

  it('blocks and resumes, but never resumes a task blocked as not resumable', async () => {
    const sessionId = session();
    const { taskId } = await rt.tasks.submitTask({ ...exec(sessionId), notifyPolicy: 'silent' });
    const ref = { sessionId, taskId };
    await rt.tasks.startTask(ref, 'w');
    expect(await rt.tasks.blockTask(ref, 'needs approval', true)).toMatchObject({
      lane: 'blocked',
      blocked: { reason: 'needs approval', resumable: true },
    });
    expect(await rt.tasks.resumeTask(ref)).toMatchObject({ status: 'active', lane: 'active' });
    await rt.tasks.blockTask(ref, 'provider quota gone', false);
    await expect(rt.tasks.resumeTask(ref)).rejects.toBeInstanceOf(NotResumableError);
    expect(await rt.tasks.cancelTask(ref, 'give up')).toMatchObject({ status: 'cancelled', completion: 'none' });
    expect(await rt.host.claimTaskCompletions({ limit: 5 })).toEqual([]);
  });
});

describe('DurableWorkRuntime', () => {
  const enqueue = () =>
    rt.work.enqueue({ kind: 'delivery.send', subjectId: 'x', payload: { deliveryId: `dlv_${'2'.repeat(26)}` } });

  it('fences every write with the current claim token and the injected clock', async () => {
    const { workId } = await enqueue();
    const first = await rt.work.claim(workId);
    expect(first).toMatchObject({ attempt: 1, owner: 'test-host', leaseUntil: '2026-05-01T09:00:10.000Z' });
    const beat = await rt.work.heartbeat(first);
    rt.clock.advance(15_000);
    await expect(rt.work.markRunning(beat)).rejects.toMatchObject({
      name: 'StaleClaimError',
      reason: 'its lease expired at 2026-05-01T09:00:10.000Z',
    });
    const second = await rt.work.claim(workId);
    expect(second.attempt).toBe(2);
    expect(second.claimToken).not.toBe(first.claimToken);
    const head = await rt.store.head();
    await expect(rt.work.succeed(first)).rejects.toMatchObject({
      name: 'StaleClaimError',
      reason: 'a newer claim holds it',
    });
    expect(await rt.store.head()).toBe(head);
    await rt.work.markSending(second);
    await rt.work.succeed(second, { externalRef: 'msg-42' });
    expect(await rt.work.get(workId)).toMatchObject({
      status: 'succeeded',
      externalRef: 'msg-42',
      attempts: 2,
      claimToken: null,
    });
  });

  it('turns an expired send into unknown, never claims it again, and lets an operator resolve it', async () => {
    const { workId } = await enqueue();
    const claim = await rt.work.claim(workId);
    await rt.work.markSending(claim);
    rt.clock.advance(60_000);
    expect(await rt.work.claimDue({ limit: 10 })).toEqual([]);
    expect(await rt.work.recover()).toEqual({ rescheduled: 0, unknown: 1, corrupt: 0 });
    expect((await rt.work.get(workId)).status).toBe('unknown');
    await expect(rt.work.claim(workId)).rejects.toMatchObject({ name: 'NotClaimableError', reason: 'it is unknown' });
    const status = await rt.host.status();
    expect(status.needsOperator).toMatchObject([{ id: workId, status: 'unknown', allowed: ['work.resolved'] }]);
    expect(status.counts).toEqual({ 'work/delivery.send/unknown': 1 });
    expect(status.running).toEqual([]);
    await rt.work.resolveUnknown(workId, 'retry');
    expect((await rt.work.claimDue({ limit: 10 })).map((c) => c.workId)).toEqual([workId]);
  });

  it('claims due work of every kind oldest first, and expires the leases of every kind by lease end', async () => {
    const taskId = (n: number) => `tsk_${String(n).repeat(26)}`;
    const first = await rt.work.enqueue({ kind: 'task.completion', subjectId: 't1', payload: { taskId: taskId(1) } });
    rt.clock.advance(1);
    const second = await enqueue();
    rt.clock.advance(1);
    const third = await rt.work.enqueue({ kind: 'task.completion', subjectId: 't2', payload: { taskId: taskId(2) } });
    // The kinds' queues merged in due order: task.completion, delivery.send, then task.completion again.
    const two = await rt.work.claimDue({ limit: 2 });
    expect(two.map((c) => c.workId)).toEqual([first.workId, second.workId]);
    rt.clock.advance(1);
    expect((await rt.work.claimDue({ limit: 5 })).map((c) => c.workId)).toEqual([third.workId]);
    rt.clock.advance(60_000);
    // At most two, the first to expire of every kind (the first two claims share their lease end).
    const settled = await rt.work.expireLeases({ limit: 2 });
    expect(settled.map((s) => s.workId).sort()).toEqual([first.workId, second.workId].sort());
    expect((await rt.work.expireLeases()).map((s) => s.workId)).toEqual([third.workId]);
  });

  it('claims due work oldest first, honours next attempt times, and sets unreadable payloads aside', async () => {
    const a = await enqueue();
    rt.clock.advance(1);
    const b = await rt.work.enqueue({
      kind: 'delivery.send',
      subjectId: 'y',
      payload: { deliveryId: `dlv_${'3'.repeat(26)}` },
      notBefore: '2026-05-01T10:00:00.000Z',
    });
    rt.clock.advance(1);
    const c = await enqueue();
    const corruptId = `wrk_${'9'.repeat(26)}`;
    await rt.store.append({
      streamType: 'work',
      streamId: corruptId,
      expectedVersion: 'no_stream',
      events: [
        {
          type: 'work.enqueued',
          data: { workId: corruptId, kind: 'delivery.send', subjectId: 'z', payload: { nope: true } },
        },
      ],
    });
    const claims = await rt.work.claimDue({ limit: 10 });
    expect(claims.map((x) => x.workId)).toEqual([a.workId, c.workId]);
    expect((await rt.work.get(corruptId)).status).toBe('corrupt');
    await rt.work.fail(claims[0]!, { error: { code: 'e', message: 'flaky' }, retryAt: '2026-05-01T09:05:00.000Z' });
    expect(await rt.work.claimDue({ limit: 10 })).toEqual([]);
    rt.clock.set(Date.parse('2026-05-01T10:00:00.000Z'));
    // a's retry is due, b's notBefore has come, and c's claim has expired: it is reclaimed with a new token.
    const later = await rt.work.claimDue({ limit: 10 });
    expect(later.map((x) => [x.workId, x.attempt])).toEqual([
      [a.workId, 2],
      [b.workId, 1],
      [c.workId, 2],
    ]);
    expect(later[2]!.claimToken).not.toBe(claims[1]!.claimToken);
    expect(
      (
        await rt.work.enqueue({
          workId: a.workId as never,
          kind: 'delivery.send',
          subjectId: 'x',
          payload: { deliveryId: `dlv_${'2'.repeat(26)}` },
        })
      ).created,
    ).toBe(false);
    await expect(rt.work.enqueue({ kind: 'nope', subjectId: 'x' })).rejects.toBeInstanceOf(UnknownKindError);
    await expect(
      rt.work.enqueue({ kind: 'task.completion', subjectId: 'x', payload: { taskId: 'bad' } }),
    ).rejects.toMatchObject({ path: ['payload', 'taskId'] });
  });

  it('ensures exactly one item per kind and subject', async () => {
    const fire = { coreId: 'default', scheduleId: 'daily', dueAt: '2026-05-02T08:00:00.000Z' };
    const first = await rt.host.enqueueScheduleFire(fire);
    const again = await rt.host.enqueueScheduleFire(fire);
    expect(first.created).toBe(true);
    expect(again).toEqual({ workId: first.workId, created: false });
    expect(first.workId.startsWith(`${IdPrefix.work}_`)).toBe(true);
  });
});

describe('idempotent creation', () => {
  it('submitting an existing task id returns the task to its session and appends nothing', async () => {
    const sessionId = session();
    const taskId = rt.ids.next('tsk');
    const first = await rt.tasks.submitTask({ ...exec(sessionId), taskId });
    const head = await rt.store.head();
    expect(await rt.tasks.submitTask({ ...exec(sessionId, 'pwd'), taskId })).toEqual(first);
    await expect(rt.tasks.submitTask({ ...exec(session()), taskId })).rejects.toBeInstanceOf(NotFoundError);
    expect(await rt.store.head()).toBe(head);
  });
});
