import { RunsCollections, runsProjector, type ToolCallView } from '@demiurge/projector-runs';
import { TaskBoardCollections, taskBoardProjector } from '@demiurge/projector-task-board';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, openHarness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('cancellation', () => {
  it('user cancel during a tool call: no new dispatch, the in-flight call settles, tasks and board updated, reason kept', async () => {
    h = await openHarness({
      script: [
        {
          tool_calls: [
            { name: 'shell', arguments: { command: 'sleep 30' } },
            { name: 'write_file', arguments: { path: 'never.txt', content: 'x' } },
          ],
        },
        { content: 'unreachable' },
      ],
    });
    const { sessionId } = await h.sessions.create({ title: 't', coreId: 'default' });
    let taskId = '';
    const cancelled = new Promise<void>((resolve) => {
      const sub = h!.store.events$.subscribe((event) => {
        if (event.type !== 'tool_call.started') return;
        sub.unsubscribe();
        void (async () => {
          const runId = (await h!.runs.load(event.meta.runId as string)).streamId;
          // A detached child task of the run, still going when the user cancels.
          const task = await h!.controlPlane.submitTask({
            sessionId,
            runId,
            kind: 'terminal.exec',
            title: 'build',
            input: { command: 'make' },
          });
          taskId = task.taskId;
          await h!.engine.cancel(runId, 'user pressed stop');
          resolve();
        })().catch((err) => {
          console.error(err);
          resolve();
        });
      });
    });
    const started = Date.now();
    const outcome = await h.engine.runTurn({ sessionId, text: 'run it' });
    await cancelled;
    expect(Date.now() - started).toBeLessThan(15_000); // the sleep was killed, not waited out
    expect(outcome).toMatchObject({ status: 'cancelled', text: 'cancelled: user pressed stop' });
    const calls = await h.store.projection(runsProjector.name).list<ToolCallView>(RunsCollections.toolCalls);
    expect(calls.map((c) => [c.tool, c.status])).toEqual([
      ['shell', 'cancelled'],
      ['write_file', 'cancelled'],
    ]);
    const run = await h.runs.get(outcome.runId);
    expect(run).toMatchObject({ state: 'cancelled', reason: 'user pressed stop', resumable: false });
    const task = await h.controlPlane.getTask({ sessionId, taskId });
    expect(task.status).toBe('cancelled');
    const board = await h.store
      .projection(taskBoardProjector.name)
      .list<{ taskId: string; lane: string }>(TaskBoardCollections.board);
    expect(board.filter((e) => e.taskId === taskId).map((e) => e.lane)).toEqual(['done']);
    // Repeating the cancel is a no-op.
    const before = (await h.types()).length;
    await h.engine.cancel(outcome.runId, 'again');
    expect((await h.types()).length).toBe(before);
    expect(await h.verify()).toEqual([]);
  });

  it('pause stops at the next step boundary and resume continues from the log', async () => {
    h = await openHarness({
      script: [
        { tool_calls: [{ name: 'shell', arguments: { command: 'sleep 0.3; echo slept' } }] },
        { content: 'after pause' },
      ],
    });
    const { sessionId } = await h.sessions.create({ title: 't', coreId: 'default' });
    const sub = h.store.events$.subscribe((event) => {
      if (event.type === 'tool_call.started') void h!.engine.pause(event.meta.runId as string, 'operator pause');
    });
    const paused = await h.engine.runTurn({ sessionId, text: 'go' });
    sub.unsubscribe();
    expect(paused.status).toBe('paused');
    await h.runs.resume(paused.runId);
    const outcome = await h.engine.resume(paused.runId);
    expect(outcome).toMatchObject({ status: 'completed', text: 'after pause' });
    expect(await h.verify()).toEqual([]);
  });

  it('close: admission closes, a running turn is stopped and its run released for the next host', async () => {
    h = await openHarness({
      script: [
        { tool_calls: [{ name: 'shell', arguments: { command: 'sleep 30' } }] },
        { content: 'resumed after restart' },
      ],
    });
    const { sessionId } = await h.sessions.create({ title: 't', coreId: 'default' });
    const sub = h.store.events$.subscribe((event) => {
      if (event.type === 'tool_call.started') void h!.engine.close({ drainMs: 50 });
    });
    const outcome = await h.engine.runTurn({ sessionId, text: 'go' });
    sub.unsubscribe();
    expect(outcome.status).toBe('interrupted');
    await expect(h.engine.runTurn({ sessionId, text: 'late' })).rejects.toThrow(/closing/);
    const run = await h.runs.get(outcome.runId);
    expect(run).toMatchObject({ state: 'running', owner: null, leaseToken: null });
    // The next host resumes at once (no lease to wait for); the stopped call was settled as cancelled.
    const next = await openHarness({
      dir: h.dir,
      path: h.path,
      owner: 'next-host',
      script: [{ content: 'x' }, { content: 'resumed after restart' }],
    });
    await h.store.close();
    try {
      const resumed = await next.engine.resume(outcome.runId);
      expect(resumed.status).toBe('completed');
      expect(await next.verify()).toEqual([]);
    } finally {
      await next.close();
    }
  });
});
