import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, openHarness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function withEndedTask(outcome: 'complete' | 'fail') {
  h = await openHarness({ script: [] });
  const { sessionId } = await h.sessions.create({ title: 'parent', coreId: 'default' });
  const task = await h.controlPlane.submitTask({
    sessionId,
    kind: 'terminal.exec',
    title: 'make',
    input: { command: 'make' },
  });
  const ref = { sessionId, taskId: task.taskId };
  await h.controlPlane.startTask(ref, 'w');
  if (outcome === 'complete') await h.controlPlane.completeTask(ref, { summary: 'built', exitCode: 0 });
  else await h.controlPlane.failTask(ref, { code: 'exit', message: 'exited 2' }, 2);
  return { h, sessionId, taskId: task.taskId };
}

describe('task notices at admission', () => {
  it('runNoticeTurn admits a turn whose input is the notices, acknowledged in the admission commit', async () => {
    const { h, sessionId, taskId } = await withEndedTask('fail');
    const head = await h.store.head();
    const outcome = await h.engine.runNoticeTurn({ sessionId });
    expect(outcome?.status).toBe('completed');
    const admission = (await h.store.readAll()).filter((e) => e.position > head && e.meta.turnId === outcome!.turnId);
    const first = admission.findIndex((e) => e.type === 'turn.started');
    const acked = admission.findIndex((e) => e.type === 'task.completion_acknowledged');
    expect(first).toBeGreaterThanOrEqual(0);
    expect(acked).toBeGreaterThanOrEqual(0);
    // One commit: every admission event shares the append's time and sits between the first and the last.
    expect(new Set(admission.slice(0, Math.max(first, acked) + 1).map((e) => e.recordedAt)).size).toBe(1);
    const input = (await h.sessions.history(sessionId)).find((m) => m.role === 'user')!;
    expect(input.text).toContain(`[task completion] Task ${taskId} "make" (terminal.exec) failed.`);
    expect(input.text).toContain('Error: exit: exited 2');
    // The model got the notice as the user's input.
    expect(h.provider.requests[0]!.messages.at(-1)).toMatchObject({ role: 'user', content: input.text });
    expect(await h.verify()).toEqual([]);
  });

  it('admits nothing when no notice is pending', async () => {
    const { h, sessionId } = await withEndedTask('complete');
    await h.engine.runNoticeTurn({ sessionId });
    const head = await h.store.head();
    expect(await h.engine.runNoticeTurn({ sessionId })).toBeUndefined();
    expect(await h.store.head()).toBe(head);
    expect(h.provider.requests).toHaveLength(1);
  });

  it('a user turn takes the pending notices as system context before its input', async () => {
    const { h, sessionId, taskId } = await withEndedTask('complete');
    const outcome = await h.engine.runTurn({ sessionId, text: 'what happened?' });
    expect(outcome.status).toBe('completed');
    const messages = h.provider.requests[0]!.messages;
    expect(messages.slice(-2)).toMatchObject([
      { role: 'system', content: expect.stringContaining(`Task ${taskId} "make" (terminal.exec) completed.`) },
      { role: 'user', content: 'what happened?' },
    ]);
    expect(await h.controlPlane.getTask({ sessionId, taskId })).toMatchObject({ completion: 'acknowledged' });
    expect(await h.engine.runNoticeTurn({ sessionId })).toBeUndefined();
  });
});
