import { afterEach, describe, expect, it } from 'vitest';
import { demiurge, demiurgeJson } from './cli.js';
import type { HistoryResult } from './gateway.js';
import { recordGolden } from './golden-record.js';
import { writeScript } from './home.js';
import { ServedHome } from './served-home.js';
import { verifyHome } from './store-checks.js';

let served: ServedHome | undefined;
afterEach(async () => {
  await served?.dispose();
  served = undefined;
});

interface TaskJson {
  readonly taskId: string;
  readonly status: string;
  readonly lane: string | null;
  readonly hidden: boolean;
  readonly cancelReason: string | null;
  readonly runId: string | null;
}

describe('unhappy paths through the gateway (demiurge serve child)', () => {
  it('(a) a client that disconnects mid-turn cancels nothing: the run completes and a new client reads the answer', async () => {
    served = await ServedHome.start({
      script: [
        {
          content: 'Running the slow step.',
          tool_calls: [{ name: 'shell', arguments: { command: 'sleep 1.5; echo slow step done' } }],
        },
        { content: 'The slow step finished.' },
      ],
    });
    const first = await served.gateway();
    const ids = await first.request('operator.submit', { text: 'run the slow step' });
    const call = await served.toolCall(ids.turn_id, (d) => d.tool === 'shell');
    await served.reader.waitFor(
      'the shell call to start',
      (e) => e.streamId === call.streamId && e.type === 'tool_call.process_started',
    );
    await first.close();

    const second = await served.gateway();
    const end = await served.turnEnd(ids.turn_id);
    expect(end.type).toBe('turn.completed');
    expect(served.types(call.streamId)).toEqual([
      'tool_call.requested',
      'tool_call.started',
      'tool_call.process_started',
      'tool_call.succeeded',
    ]);
    expect(served.reader.stream(call.streamId)[3]!.data.output).toMatch(/^exit 0\nslow step done$/);
    const history = (await second.request('operator.history', { session_id: ids.session_id })) as HistoryResult;
    expect(history.messages.filter((m) => m.turn_id === ids.turn_id).map((m) => [m.role, m.text])).toEqual([
      ['user', 'run the slow step'],
      ['assistant', 'The slow step finished.'],
    ]);
    expect(served.types(ids.run_id)).not.toContain('run.cancel_requested');
    expect(await verifyHome(served.home.dir)).toMatchObject({ ok: true, problems: [] });
  });

  it('(b) operator.cancel during a tool call: the call is cancelled at once, the run and turn end cancelled, its task leaves the board', async () => {
    served = await ServedHome.start({
      script: [
        {
          content: 'Starting the long build.',
          tool_calls: [{ name: 'shell', arguments: { command: 'sleep 30', background: true } }],
        },
        { content: 'Now the slow check.', tool_calls: [{ name: 'shell', arguments: { command: 'sleep 5' } }] },
        { content: 'never reached' },
      ],
    });
    const client = await served.gateway();
    const ids = await client.request('operator.submit', { text: 'build and check' });
    const slow = await served.toolCall(ids.turn_id, (d) => (d.arguments as { command?: string }).command === 'sleep 5');
    await served.reader.waitFor(
      'the slow call to start',
      (e) => e.streamId === slow.streamId && e.type === 'tool_call.process_started',
    );
    const task = await served.reader.waitFor('the build task to start', (e) => e.type === 'task.started');
    expect(
      await client.request('operator.cancel', { run_id: ids.run_id, reason: 'the user changed their mind' }),
    ).toEqual({ ok: true });

    const end = await served.turnEnd(ids.turn_id, 15_000);
    expect(end).toMatchObject({ type: 'turn.cancelled', data: { reason: 'the user changed their mind' } });
    // Cancelled, not succeeded: the 5 s sleep was stopped, not waited for.
    expect(served.types(slow.streamId)).toEqual([
      'tool_call.requested',
      'tool_call.started',
      'tool_call.process_started',
      'tool_call.cancelled',
    ]);
    const run = served.reader.stream(ids.run_id);
    const types = run.map((e) => e.type);
    expect(types.indexOf('run.cancel_requested')).toBeGreaterThan(0);
    expect(types.indexOf('run.cancel_requested')).toBeLessThan(types.indexOf('run.cancelled'));
    expect(run.at(-1)).toMatchObject({ type: 'run.cancelled', data: { reason: 'the user changed their mind' } });
    const listed = await demiurgeJson<{ tasks: TaskJson[] }>(['tasks', 'list', '--all', '--home', served.home.dir]);
    expect(listed.tasks.find((t) => t.taskId === task.streamId)).toMatchObject({
      status: 'cancelled',
      lane: 'done',
      runId: ids.run_id,
    });
    expect(served.types(task.streamId)).toContain('task.cancelled');
    expect(await verifyHome(served.home.dir)).toMatchObject({ ok: true, problems: [] });
    await recordGolden('crash-cancel', served.home.dir);
  });

  it("(d) a deleted task sent back by an old client stays deleted: operator.cancel and the model's task_control change nothing", async () => {
    const start = {
      content: 'Starting the long job.',
      tool_calls: [{ name: 'shell', arguments: { command: 'sleep 30', background: true } }],
    };
    served = await ServedHome.start({ script: [start, { content: 'Started.' }] });
    const old = await served.gateway();
    const ids = await old.request('operator.submit', { text: 'start the long job' });
    expect((await served.turnEnd(ids.turn_id)).type).toBe('turn.completed');
    const started = await served.reader.waitFor('the job to start', (e) => e.type === 'task.started');
    const taskId = started.streamId;
    expect(await old.request('operator.cancel', { task_id: taskId, reason: 'not needed' })).toEqual({ ok: true });
    await served.reader.waitFor('the job to be cancelled', (e) => e.streamId === taskId && e.type === 'task.cancelled');
    // The session is told (a completion turn: "cancelled: not needed") before the task is deleted.
    const told = await served.reader.waitFor(
      'the completion turn',
      (e) => e.type === 'turn.started' && e.data.sessionId === ids.session_id && e.streamId !== ids.turn_id,
    );
    expect((await served.turnEnd(told.streamId)).type).toBe('turn.completed');
    const deleted = await demiurge(['tasks', 'delete', taskId, '--home', served.home.dir]);
    expect([deleted.code, deleted.stderr]).toEqual([0, '']);
    const afterDelete = served.types(taskId);
    expect(afterDelete.at(-1)).toBe('task.deleted');

    // The old client still shows the task and cancels it again: a clean no-op or a clean refusal.
    const again = await old.request('operator.cancel', { task_id: taskId, reason: 'stale screen' }).then(
      (result) => ({ result }),
      (error: Error & { code?: string }) => ({ error: { name: error.name, code: error.code, message: error.message } }),
    );
    console.log(`(d) operator.cancel of the deleted task ${taskId}: ${JSON.stringify(again)}`);
    if ('error' in again) {
      expect(again.error.name).toBe('OperatorRequestError');
      expect(again.error.code).not.toBe('internal_error');
      expect(again.error.message).not.toMatch(/\n\s+at /);
    } else expect(again.result).toEqual({ ok: true });
    expect(served.types(taskId)).toEqual(afterDelete);

    // The model, from an older view of the session, asks task_control to cancel it.
    await served.stop('SIGTERM');
    writeScript(served.home.dir, [
      start,
      { content: 'Noted: the job was cancelled.' }, // the completion turn played step 1 already
      {
        content: 'Cancelling the job.',
        tool_calls: [{ name: 'task_control', arguments: { task_id: taskId, command: 'cancel' } }],
      },
      { content: 'Asked to cancel it.' },
    ]);
    await served.restart();
    const client = await served.gateway();
    const turn = await client.request('operator.submit', { text: 'cancel the long job', session_id: ids.session_id });
    expect((await served.turnEnd(turn.turn_id)).type).toBe('turn.completed');
    const control = await served.toolCall(turn.turn_id, (d) => d.tool === 'task_control');
    const outcome = served.reader.stream(control.streamId).at(-1)!;
    console.log(`(d) task_control of the deleted task: ${outcome.type} ${JSON.stringify(outcome.data)}`);
    expect(['tool_call.succeeded', 'tool_call.failed']).toContain(outcome.type);
    expect(JSON.stringify(outcome.data)).not.toMatch(/\\n\s+at /);
    expect(served.types(taskId)).toEqual(afterDelete);
    const shown = await demiurgeJson<{ task: TaskJson }>(['tasks', 'show', taskId, '--home', served.home.dir]);
    expect(shown.task).toMatchObject({ status: 'deleted', hidden: true, lane: null });
    const listed = await demiurgeJson<{ tasks: TaskJson[] }>(['tasks', 'list', '--home', served.home.dir]);
    expect(listed.tasks.map((t) => t.taskId)).not.toContain(taskId);
    expect(await verifyHome(served.home.dir)).toMatchObject({ ok: true, problems: [] });
  });
});
