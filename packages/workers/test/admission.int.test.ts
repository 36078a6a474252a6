import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ExclusiveScopeBusyError,
  NoTaskHandlerError,
  SHUTDOWN_REASON,
  TaskNotStartableError,
  WorkerClosedError,
} from '../src/index.js';
import { type Harness, isRunning, openHarness, streamTypes } from './harness.js';

let h: Harness;
afterEach(async () => {
  await h.verify();
  await h.dispose();
});

describe('admission', () => {
  it('refuses a second task with an overlapping exclusive scope while the first runs', async () => {
    h = await openHarness();
    const app = join(h.dir, 'app');
    await mkdir(join(app, 'src'), { recursive: true });
    const first = await h.run({ command: 'sleep', args: ['60'], cwd: app, exclusiveScope: '.' });

    const same = await h.submit({ command: 'touch', args: ['x'], cwd: app, exclusiveScope: '.' });
    const nested = await h.submit({ command: 'touch', args: ['y'], cwd: join(app, 'src'), exclusiveScope: '.' });
    const elsewhere = await h.submit({ command: 'true', cwd: h.dir, exclusiveScope: 'other' });
    const unscoped = await h.submit({ command: 'true', cwd: app });

    const refused = await h.worker.start(same).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ExclusiveScopeBusyError);
    expect((refused as Error).message).toBe(
      `task ${same.taskId} needs exclusive write access to ${app}, but task ${first.taskId} is running with ` +
        `exclusive scope ${app}; start it after that task ends`,
    );
    await expect(h.worker.start(nested)).rejects.toBeInstanceOf(ExclusiveScopeBusyError);
    // Nothing was appended for a refused start: the task is still created.
    expect(await streamTypes(h.store, same.taskId)).toEqual(['task.submitted']);
    expect((await h.worker.start(elsewhere)).status).not.toBe('created');
    expect((await h.worker.start(unscoped)).status).not.toBe('created');

    await h.worker.cancel(first, 'make room');
    expect(await h.worker.start(same)).toMatchObject({ status: expect.stringMatching(/active|completed/) });
    expect((await h.worker.wait(same, 5000)).status).toBe('completed');
  });

  it('refuses what it cannot start: unknown kinds, tasks already started, another session', async () => {
    h = await openHarness();
    const spawnTask = await h.controlPlane.submitTask({
      sessionId: h.sessionId,
      kind: 'agent.spawn',
      title: 'child',
      input: { goal: 'help' },
    });
    await expect(h.worker.start({ sessionId: h.sessionId, taskId: spawnTask.taskId })).rejects.toBeInstanceOf(
      NoTaskHandlerError,
    );
    const ref = await h.run({ command: 'true' });
    await h.worker.wait(ref, 5000);
    await expect(h.worker.start(ref)).rejects.toBeInstanceOf(TaskNotStartableError);
    await expect(h.worker.start({ sessionId: h.ids.next('ses'), taskId: ref.taskId })).rejects.toThrow(/no task/);
    await expect(h.worker.cancel({ sessionId: h.ids.next('ses'), taskId: ref.taskId }, 'x')).rejects.toThrow(/no task/);
  });

  it('runs the submitted tasks it handles, oldest first', async () => {
    h = await openHarness();
    const a = await h.submit({ command: 'true' });
    const b = await h.submit({ command: 'true' });
    await h.controlPlane.submitTask({ sessionId: h.sessionId, kind: 'agent.spawn', title: 'x', input: { goal: 'g' } });
    const report = await h.worker.runSubmitted();
    expect(report.started.map((t) => t.taskId)).toEqual([a.taskId, b.taskId]);
    expect(report.refused).toEqual([]);
    for (const ref of [a, b]) expect((await h.worker.wait(ref, 5000)).status).toBe('completed');
  });

  it('on close, shuts admission first, then cancels and drains every running task', async () => {
    h = await openHarness();
    const one = await h.run({ command: 'sleep', args: ['60'] });
    const two = await h.run({ command: 'sh', args: ['-c', 'sleep 60 & sleep 60'] });
    const late = await h.submit({ command: 'true' });
    const pids = await Promise.all([one, two].map(async (r) => (await h.worker.getTask(r)).process!.pid));

    const closing = h.worker.close();
    // Admission is already closed, before the drain finished.
    await expect(h.worker.start(late)).rejects.toBeInstanceOf(WorkerClosedError);
    const report = await closing;
    expect(report.errors).toEqual([]);
    expect(report.cancelled.map((t) => t.taskId).sort()).toEqual([one.taskId, two.taskId].sort());
    for (const ref of [one, two]) {
      const view = await h.worker.getTask(ref);
      expect(view.status).toBe('cancelled');
      expect(view.cancelReason?.startsWith(`${SHUTDOWN_REASON} (`)).toBe(true);
    }
    expect(pids.map(isRunning)).toEqual([false, false]);
    await expect(h.worker.start(late)).rejects.toThrow(
      `host host-1 is shutting down: task ${late.taskId} was not started`,
    );
    expect((await h.worker.getTask(late)).status).toBe('created');
    expect(h.worker.activeTaskIds()).toEqual([]);
    expect(await h.worker.close()).toBe(report);
  });
});
