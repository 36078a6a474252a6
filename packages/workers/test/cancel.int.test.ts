import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTerminalExecHandler, type KillFn, type TaskHandler } from '../src/index.js';
import { eventually, type Harness, isRunning, openHarness, readPid, streamTypes } from './harness.js';

let h: Harness;
afterEach(async () => {
  await h.verify();
  await h.dispose();
});

/** A kill function that records every signal it sends. */
function countingKill() {
  const sent: [number, NodeJS.Signals | 0][] = [];
  const kill: KillFn = (pid, signal) => {
    sent.push([pid, signal]);
    process.kill(pid, signal);
  };
  return { sent, kill };
}

describe('cancel', () => {
  it('stops grandchildren after the leader exited, including one that left the group (setsid)', async () => {
    h = await openHarness();
    const inGroup = join(h.dir, 'in-group.pid');
    const escaped = join(h.dir, 'escaped.pid');
    const ref = await h.run({
      command: 'sh',
      args: ['-c', `sleep 60 & echo $! > ${inGroup}; setsid sleep 60 & echo $! > ${escaped}; exit 0`],
    });
    const grandchildren = [await readPid(inGroup), await readPid(escaped)];
    const leader = (await h.worker.getTask(ref)).process!.pid;
    expect(await eventually(() => !isRunning(leader))).toBe(true);
    // The leader is gone but its children still hold the output pipes: the task is still running.
    expect((await h.worker.getTask(ref)).status).toBe('active');
    expect(grandchildren.map(isRunning)).toEqual([true, true]);

    const view = await h.worker.cancel(ref, 'user stop');
    expect(view).toMatchObject({
      status: 'cancelled',
      cancelReason: 'user stop (exit code 0; process tree stopped with SIGTERM)',
      completion: 'ready',
    });
    expect(grandchildren.map(isRunning)).toEqual([false, false]);
    const types = await streamTypes(h.store, ref.taskId);
    expect(types.slice(-4)).toEqual([
      'task.artifact_recorded',
      'task.artifact_recorded',
      'task.cancelled',
      'task.completion_ready',
    ]);
    const notices = await h.store.readAll({ types: ['work.enqueued'] });
    expect(notices.map((e) => (e.data as { subjectId: string }).subjectId)).toEqual([ref.taskId]);
  });

  it('kills a child that ignores SIGTERM once the grace period is over', async () => {
    const { sent, kill } = countingKill();
    h = await openHarness({ graceMs: 400, handlers: { 'terminal.exec': createTerminalExecHandler({ kill }) } });
    const pidFile = join(h.dir, 'sh.pid');
    const ref = await h.run({
      command: 'sh',
      args: ['-c', `trap '' TERM; echo $$ > ${pidFile}; sleep 60; echo never`],
    });
    const pid = await readPid(pidFile);
    const started = Date.now();
    const view = await h.worker.cancel(ref, 'too slow');
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(view.cancelReason).toBe(
      'too slow (exit signal SIGKILL; process tree killed with SIGKILL after 400 ms of SIGTERM)',
    );
    expect(isRunning(pid)).toBe(false);
    expect(sent).toEqual([
      [-pid, 'SIGTERM'],
      [-pid, 'SIGKILL'],
    ]);
  });

  it('runs one cleanup for eight concurrent cancels, and all of them observe its result', async () => {
    const { sent, kill } = countingKill();
    const inner = createTerminalExecHandler({ kill });
    let stops = 0;
    const counted: TaskHandler = {
      prepare: (task) => inner.prepare(task),
      async start(ctx) {
        const running = await inner.start(ctx);
        return {
          finished: running.finished,
          stop: (reason) => {
            stops++;
            return running.stop(reason);
          },
        };
      },
    };
    h = await openHarness({ handlers: { 'terminal.exec': counted } });
    const ref = await h.run({ command: 'sleep', args: ['60'] });
    const announced: unknown[] = [];
    h.worker.onCompletion((task) => announced.push(task));
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => h.worker.cancel(ref, `stop ${i}`)));
    expect(stops).toBe(1);
    expect(sent.filter(([, s]) => s === 'SIGTERM')).toHaveLength(1);
    for (const r of results) expect(r).toEqual(results[0]);
    expect(announced).toEqual([results[0]]);
    expect(results[0]).toMatchObject({
      status: 'cancelled',
      cancelReason: 'stop 0 (exit signal SIGTERM; process tree stopped with SIGTERM)',
    });
    const types = await streamTypes(h.store, ref.taskId);
    expect(types.filter((t) => t === 'task.cancelled')).toHaveLength(1);
    expect(types.filter((t) => t === 'task.completion_ready')).toHaveLength(1);
    // Later cancels read the same ending back from the log.
    expect(await h.worker.cancel(ref, 'again')).toEqual(results[0]);
    expect(stops).toBe(1);
  });

  it('cancels a task that has not started, and stops the work of a task the control plane cancelled directly', async () => {
    h = await openHarness();
    const queued = await h.submit({ command: 'sleep', args: ['60'] });
    expect(await h.worker.cancel(queued, 'not needed')).toMatchObject({
      status: 'cancelled',
      cancelReason: 'not needed',
    });

    const ref = await h.run({ command: 'sleep', args: ['60'] });
    const pid = (await h.worker.getTask(ref)).process!.pid;
    await h.controlPlane.cancelTask(ref, 'operator stop');
    expect(await eventually(() => !isRunning(pid))).toBe(true);
    expect(await eventually(() => h.worker.activeTaskIds().length === 0)).toBe(true);
    expect(await h.worker.getTask(ref)).toMatchObject({ status: 'cancelled', cancelReason: 'operator stop' });
  });

  it('seed scenario 13: killing the tree fails (EPERM): the task is cancelled at once with the error type recorded', async () => {
    const refused: KillFn = () => {
      throw Object.assign(new Error('kill EPERM'), { code: 'EPERM', syscall: 'kill' });
    };
    h = await openHarness({
      graceMs: 5_000,
      handlers: { 'terminal.exec': createTerminalExecHandler({ kill: refused }) },
    });
    const ref = await h.run({ command: 'sleep', args: ['60'] });
    const pid = (await h.worker.getTask(ref)).process!.pid;
    try {
      const started = Date.now();
      const view = await h.worker.cancel(ref, 'user stop');
      expect(Date.now() - started).toBeLessThan(2_000); // at once: no grace period waited out, no hang
      expect(view).toMatchObject({
        status: 'cancelled',
        lane: 'done',
        cancelReason: 'user stop (cleanup failed: Error (EPERM): kill EPERM)',
        cleanupError: { type: 'Error (EPERM)', message: 'kill EPERM' },
        completion: 'ready',
      });
      const cancelled = await h.store.readAll({ types: ['task.cancelled'] });
      expect(cancelled.map((e) => e.data)).toEqual([
        {
          taskId: ref.taskId,
          reason: 'user stop (cleanup failed: Error (EPERM): kill EPERM)',
          cleanupError: { type: 'Error (EPERM)', message: 'kill EPERM' },
        },
      ]);
      expect(h.worker.activeTaskIds()).toEqual([]);
    } finally {
      process.kill(-pid, 'SIGKILL'); // what the failed cleanup could not stop
    }
  });

  it("seed scenario 13: the handler's cleanup callback throws: cancelled at once, the error type recorded", async () => {
    const inner = createTerminalExecHandler();
    const pids: number[] = [];
    const throwing: TaskHandler = {
      prepare: (task) => inner.prepare(task),
      async start(ctx) {
        const running = await inner.start(ctx);
        pids.push((running as unknown as { record: { pgid: number } }).record.pgid);
        return {
          finished: running.finished,
          stop: () => {
            throw new TypeError('cleanup callback exploded');
          },
        };
      },
    };
    h = await openHarness({ handlers: { 'terminal.exec': throwing } });
    const ref = await h.run({ command: 'sleep', args: ['60'] });
    try {
      const view = await h.worker.cancel(ref, 'user stop');
      expect(view).toMatchObject({
        status: 'cancelled',
        cancelReason: 'user stop (cleanup failed: TypeError: cleanup callback exploded)',
        cleanupError: { type: 'TypeError', message: 'cleanup callback exploded' },
      });
      const types = await streamTypes(h.store, ref.taskId);
      expect(types.slice(-2)).toEqual(['task.cancelled', 'task.completion_ready']);
      expect(await h.worker.cancel(ref, 'again')).toEqual(view); // repeat: the same ending, read back
    } finally {
      for (const pgid of pids) process.kill(-pgid, 'SIGKILL');
    }
  });

  it('waits for the end of a task, or returns it as it is when the timeout runs out', async () => {
    h = await openHarness();
    const ref = await h.run({ command: 'sleep', args: ['0.4'] });
    expect((await h.worker.wait(ref, 50)).status).toBe('active');
    expect(await h.worker.wait(ref, 5000)).toMatchObject({ status: 'completed', exitCode: 0 });
    expect((await h.worker.wait(ref, 5000)).status).toBe('completed');
  });
});
