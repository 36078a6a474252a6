import { RunsCollections, runsProjector, type ToolCallView } from '@demiurge/projector-runs';
import { TaskBoardCollections, taskBoardProjector } from '@demiurge/projector-task-board';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, openHarness } from './harness.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

  it('pause lets the running call finish and be recorded, waits at the step boundary, and resume continues the same turn', async () => {
    h = await openHarness({
      script: [
        { tool_calls: [{ name: 'shell', arguments: { command: 'sleep 0.5; echo slept' } }] },
        { content: 'after pause' },
      ],
    });
    const { sessionId } = await h.sessions.create({ title: 't', coreId: 'default' });
    let runId = '';
    const sub = h.store.events$.subscribe((event) => {
      if (event.type !== 'tool_call.started') return;
      runId = event.meta.runId as string;
      void h!.engine.pause(runId, 'operator pause');
    });
    let settled = false;
    const turn = h.engine.runTurn({ sessionId, text: 'go' }).finally(() => {
      settled = true;
    });
    // The call finishes (it is not aborted) and is recorded; the run then waits paused, still owned.
    for (let i = 0; i < 100 && !(await h.types()).includes('tool_call.succeeded'); i++) await sleep(50);
    sub.unsubscribe();
    await sleep(300);
    expect(settled).toBe(false);
    const run = await h.runs.get(runId);
    expect(run).toMatchObject({ state: 'paused', owner: 'test-host' });
    expect((await h.types()).filter((t) => t.startsWith('tool_call.'))).toEqual([
      'tool_call.requested',
      'tool_call.started',
      'tool_call.process_started', // the foreground shell's process group, recorded before its command runs
      'tool_call.succeeded',
    ]);
    expect(h.provider.requests).toHaveLength(1); // no model round started while paused
    // Resuming (as any process would: an event in the log) continues the same drive to the answer.
    await h.runs.resume(runId);
    expect(await turn).toMatchObject({ status: 'completed', text: 'after pause' });
    expect(await h.verify()).toEqual([]);
  });

  it('paused while waiting for an approval: the granted call starts only after the resume', async () => {
    h = await openHarness({
      script: [
        { tool_calls: [{ name: 'write_file', arguments: { path: 'plan.md', content: 'x' } }] },
        { content: 'written' },
      ],
      onPlanModeWrite: 'ask',
    });
    const { sessionId } = await h.sessions.create({ title: 't', coreId: 'default', mode: 'plan' });
    let runId = '';
    let approvalId = '';
    const sub = h.store.events$.subscribe((event) => {
      if (event.type !== 'approval.requested') return;
      runId = (event.data as { runId: string }).runId;
      approvalId = (event.data as { approvalId: string }).approvalId;
      void (async () => {
        await h!.engine.pause(runId, 'hold on');
        await h!.approvals.grant(approvalId, { kind: 'operator', id: 'alice' }, 'fine');
      })();
    });
    const turn = h.engine.runTurn({ sessionId, text: 'write' });
    for (let i = 0; i < 100 && !(await h.types()).includes('approval.granted'); i++) await sleep(50);
    sub.unsubscribe();
    await sleep(300);
    expect((await h.types()).filter((t) => t.startsWith('tool_call.'))).toEqual(['tool_call.requested']);
    expect((await h.runs.get(runId)).state).toBe('paused');
    await h.runs.resume(runId);
    expect(await turn).toMatchObject({ status: 'completed', text: 'written' });
    const types = await h.types();
    expect(types.filter((t) => t.startsWith('tool_call.'))).toEqual([
      'tool_call.requested',
      'tool_call.started',
      'tool_call.succeeded',
    ]);
    expect(types).toContain('approval.consumed');
    expect(await h.verify()).toEqual([]);
  });

  it('a paused run that is cancelled settles at once, without waiting for a resume', async () => {
    h = await openHarness({
      script: [{ tool_calls: [{ name: 'shell', arguments: { command: 'true' } }] }, { content: 'never' }],
    });
    const { sessionId } = await h.sessions.create({ title: 't', coreId: 'default' });
    const sub = h.store.events$.subscribe((event) => {
      if (event.type === 'tool_call.requested') void h!.engine.pause(event.meta.runId as string, 'hold');
      if (event.type === 'run.paused') void h!.engine.cancel(event.streamId, 'not needed');
    });
    const outcome = await h.engine.runTurn({ sessionId, text: 'go' });
    sub.unsubscribe();
    expect(outcome).toMatchObject({ status: 'cancelled', text: 'cancelled: not needed' });
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
