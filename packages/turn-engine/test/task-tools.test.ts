import { completionWorkId } from '@demiurge/control-plane';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolContext } from '../src/index.js';
import { type Harness, openHarness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function setup() {
  h = await openHarness({ script: [] });
  const session = await h.sessions.create({ title: 'parent', coreId: 'default' });
  const ctx = (runId = 'run_01JD5Y7Q6N0000000000000001'): ToolContext => ({
    workspaceRoot: h!.workspace,
    signal: new AbortController().signal,
    sessionId: session.sessionId,
    turnId: 'trn_01JD5Y7Q6N0000000000000001',
    runId,
    toolCallId: 'tcl_01JD5Y7Q6N0000000000000001',
  });
  const call = async (name: string, args: unknown, context = ctx()) => {
    const tool = h!.tools.get(name)!;
    return JSON.parse((await tool.run(tool.input.parse(args), context)).output);
  };
  return { h, session, ctx, call };
}

describe('model-facing task tools', () => {
  it('shell with background: true submits a terminal.exec task of the session and returns at once', async () => {
    const { h, session, call } = await setup();
    const started = Date.now();
    const result = await call('shell', { command: 'sleep 30', background: true });
    expect(Date.now() - started).toBeLessThan(5_000);
    const task = await h.controlPlane.getTask({ sessionId: session.sessionId, taskId: result.task_id });
    expect(task).toMatchObject({ kind: 'terminal.exec', status: 'created' });
    expect(task.input).toMatchObject({ command: '/bin/sh', args: ['-c', 'sleep 30'] });
    // Submitted by the model acting in the session: that is the recorded actor.
    const submitted = (await h.store.readStream(result.task_id))[0]!;
    expect(submitted.meta.actor).toEqual({ kind: 'agent', id: session.sessionId });
    await expect(call('shell', { command: 'ls', background: true, cwd: '../..' })).rejects.toThrow(/outside|escape/i);
  });

  it('delegate_task enforces depth, children per turn, running children per session and selections', async () => {
    const { h, session, call, ctx } = await setup();
    const a = await call('delegate_task', { goal: 'research A' }, ctx('run_01JD5Y7Q6N00000000000000A1'));
    const task = await h.controlPlane.getTask({ sessionId: session.sessionId, taskId: a.task_id });
    expect(task).toMatchObject({ kind: 'agent.spawn', status: 'created' });
    expect(task.input).toMatchObject({ goal: 'research A', contextMode: 'isolated', maxDepth: 2 });
    await call('delegate_task', { goal: 'research B' }, ctx('run_01JD5Y7Q6N00000000000000A1'));
    await expect(call('delegate_task', { goal: 'C' }, ctx('run_01JD5Y7Q6N00000000000000A2'))).rejects.toThrow(
      /2 children are still running in this session \(limit 2\)/,
    );
    await expect(call('delegate_task', { goal: 'x', tools: ['nope'] })).rejects.toThrow(
      /unknown tools nope; tools: read_file/,
    );
    await expect(call('delegate_task', { goal: 'x', input_slots: ['mystery'] })).rejects.toThrow(
      /unknown input slots mystery; input slots: base_input/,
    );
    expect(() => h.tools.get('delegate_task')!.input.parse({ goal: '' })).toThrow();
    expect(() => h.tools.get('delegate_task')!.input.parse({ goal: 'x', context_mode: 'shared' })).toThrow();
    expect(() => h.tools.get('delegate_task')!.input.parse({ goal: 'x', notify_policy: 'loud' })).toThrow();

    // A child session at depth 2 cannot delegate again (default max depth 2).
    const child = await h.sessions.create({
      title: 'grandchild',
      coreId: 'default',
      parent: { sessionId: session.sessionId, taskId: a.task_id, depth: 2 },
    });
    const tool = h.tools.get('delegate_task')!;
    await expect(
      tool.run(tool.input.parse({ goal: 'deeper' }), { ...ctx(), sessionId: child.sessionId }),
    ).rejects.toThrow(/delegation depth 3 is over the limit of 2/);
  });

  it('delegate_task refuses more than 4 children in one turn', async () => {
    const { h, session, call, ctx } = await setup();
    const runId = 'run_01JD5Y7Q6N00000000000000B1';
    for (let i = 0; i < 4; i++) {
      const { task_id } = await call('delegate_task', { goal: `g${i}` }, ctx(runId));
      // Finish each so the running-children limit does not bite first.
      await h.controlPlane.cancelTask({ sessionId: session.sessionId, taskId: task_id }, 'test');
    }
    await expect(call('delegate_task', { goal: 'fifth' }, ctx(runId))).rejects.toThrow(
      /already delegated 4 children \(limit 4\)/,
    );
  });

  it('task_status, task_control and task_list see only this session’s detached tasks', async () => {
    const { h, session, call, ctx } = await setup();
    const { task_id } = await call('shell', { command: 'sleep 5', background: true });
    expect(await call('task_list', {})).toEqual([expect.objectContaining({ task_id, kind: 'terminal.exec' })]);
    expect(await call('task_status', { task_id })).toMatchObject({ task_id, status: 'created' });
    const other = await h.sessions.create({ title: 'other', coreId: 'default' });
    const foreign = { ...ctx(), sessionId: other.sessionId };
    const status = h.tools.get('task_status')!;
    await expect(status.run({ task_id, view: 'model' }, foreign)).rejects.toThrow(`task ${task_id} not found`);
    await expect(status.run({ task_id: 'tsk_01JD5Y7Q6N0000000000000000', view: 'model' }, ctx())).rejects.toThrow(
      /not found/,
    );
    await expect(call('task_control', { task_id, command: 'pause' })).rejects.toThrow(/only "cancel"/);
    expect(await call('task_control', { task_id })).toMatchObject({ status: 'cancelled' });
    expect((await h.controlPlane.getTask({ sessionId: session.sessionId, taskId: task_id })).status).toBe('cancelled');
  });

  it('yield_until returns the final status and consumes the completion notice; on timeout it says timed_out', async () => {
    const { h, session, call } = await setup();
    const { task_id } = await call('shell', { command: 'true', background: true });
    expect(await call('yield_until', { task_id, timeout_seconds: 0.2 })).toMatchObject({
      status: 'created',
      timed_out: true,
    });
    const ref = { sessionId: session.sessionId, taskId: task_id };
    setTimeout(() => {
      void h.controlPlane
        .startTask(ref, 'worker-1')
        .then(() => h.controlPlane.completeTask(ref, { exitCode: 0, summary: 'ok' }));
    }, 100);
    expect(await call('yield_until', { task_id, timeout_seconds: 10 })).toMatchObject({
      status: 'completed',
      exit_code: 0,
      timed_out: false,
    });
    expect((await h.controlPlane.getTask(ref)).completion).toBe('acknowledged');
    expect((await h.work.get(completionWorkId(task_id))).status).toBe('acknowledged');
    expect(await h.verify()).toEqual([]);
  });
});

describe('task_status view and delegate_task strictness (issue 13)', () => {
  it('task_status view "operator" returns the model fields and the operator fields', async () => {
    const { call } = await setup();
    const { task_id } = await call('shell', { command: 'sleep 5', background: true });
    const model = await call('task_status', { task_id });
    const operator = await call('task_status', { task_id, view: 'operator' });
    expect(operator).toMatchObject(model);
    for (const key of ['task_id', 'kind', 'title', 'status', 'log_tail']) expect(Object.keys(operator)).toContain(key);
    expect(operator).toMatchObject({
      session_id: expect.stringMatching(/^ses_/),
      notify_policy: 'return_to_parent',
      completion: 'none',
      allowed: expect.arrayContaining(['task.cancelled']),
    });
    expect(() => h!.tools.get('task_status')!.input.parse({ task_id, view: 'debug' })).toThrow();
  });

  it('delegate_task refuses unknown keys (naming them) and any core but the host’s', async () => {
    h = await openHarness({ script: [], coreId: 'default' });
    const session = await h.sessions.create({ title: 'parent', coreId: 'default' });
    const tool = h.tools.get('delegate_task')!;
    const parsed = tool.input.safeParse({ goal: 'x', tool_policy: 'read-only' });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toContain('tool_policy');
    const ctx: ToolContext = {
      workspaceRoot: h.workspace,
      signal: new AbortController().signal,
      sessionId: session.sessionId,
      turnId: 'trn_01JD5Y7Q6N0000000000000001',
      runId: 'run_01JD5Y7Q6N0000000000000001',
      toolCallId: 'tcl_01JD5Y7Q6N0000000000000001',
    };
    await expect(tool.run(tool.input.parse({ goal: 'x', core_id: 'researcher' }), ctx)).rejects.toThrow(
      'unknown core_id "researcher": this host runs one Agent Core, "default"; omit core_id or pass "default"',
    );
    const { task_id } = JSON.parse((await tool.run(tool.input.parse({ goal: 'x', core_id: 'default' }), ctx)).output);
    const task = await h.controlPlane.getTask({ sessionId: session.sessionId, taskId: task_id });
    expect(task.input).toMatchObject({ coreId: 'default' });
  });

  it('through the engine, unknown delegate_task keys fail the call with the key named and the accepted keys', async () => {
    h = await openHarness({
      script: [
        { tool_calls: [{ name: 'delegate_task', arguments: { goal: 'x', tool_policy: 'read-only' } }] },
        { content: 'ok' },
      ],
    });
    const { sessionId } = await h.sessions.create({ title: 't', coreId: 'default' });
    const outcome = await h.engine.runTurn({ sessionId, text: 'delegate' });
    expect(outcome.status).toBe('completed');
    const failed = (await h.store.readAll({ types: ['tool_call.failed'] }))[0]!;
    expect((failed.data as { error: { message: string } }).error.message).toBe(
      'invalid delegate_task arguments at (root): unknown key "tool_policy"; accepted keys: goal, core_id, ' +
        'context_mode, notify_policy, max_depth, tools, input_slots, output_slots, use_bootstrap',
    );
    expect(await h.controlPlane.listTasks(sessionId)).toEqual([]);
  });
});
