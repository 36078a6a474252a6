import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RecordedEvent } from '@demiurge/contracts';
import { completionWorkId } from '@demiurge/control-plane';
import { verifyLog } from '@demiurge/lifecycle';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DemiurgeApp } from '../src/index.js';

let home: string;
let workspace: string;
let app: DemiurgeApp | undefined;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'demiurge-completion-'));
  workspace = mkdtempSync(join(tmpdir(), 'demiurge-ws-'));
});
afterEach(async () => {
  await app?.close();
  app = undefined;
  rmSync(home, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

async function start(script: unknown[], options: { background?: boolean } = {}): Promise<DemiurgeApp> {
  const fakeScript = join(home, 'script.json');
  writeFileSync(fakeScript, JSON.stringify(script));
  app = await DemiurgeApp.start({ home, overrides: { workspace, fakeScript }, env: {}, ...options });
  return app;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The session's turn.started events, in order. */
async function turnsOf(a: DemiurgeApp, sessionId: string): Promise<RecordedEvent[]> {
  return (await a.store.readAll()).filter(
    (e) => e.type === 'turn.started' && (e.data as { sessionId: string }).sessionId === sessionId,
  );
}

/** The turn.started of the session's n-th turn, once it ended (completed). */
function endedTurn(a: DemiurgeApp, sessionId: string, n: number): Promise<RecordedEvent> {
  return until(`turn ${n} of ${sessionId} to complete`, async () => {
    const started = (await turnsOf(a, sessionId))[n - 1];
    if (!started) return undefined;
    const events = await a.store.readStream(started.streamId);
    return events.some((e) => e.type === 'turn.completed') ? started : undefined;
  });
}

/** The events appended in the same commit as `event` (same append: same meta.turnId and a contiguous block). */
async function commitOf(a: DemiurgeApp, event: RecordedEvent): Promise<RecordedEvent[]> {
  const all = await a.store.readAll();
  const at = all.findIndex((e) => e.position === event.position);
  const same = (e: RecordedEvent | undefined) =>
    e !== undefined && e.recordedAt === event.recordedAt && e.meta.turnId === event.meta.turnId;
  let from = at;
  while (same(all[from - 1])) from--;
  let to = at;
  while (same(all[to + 1])) to++;
  return all.slice(from, to + 1);
}

async function messagesOfTurn(a: DemiurgeApp, sessionId: string, turnId: string) {
  return (await a.runtime.sessions.history(sessionId)).filter((m) => m.turnId === turnId);
}

const hello = { content: 'Hi.' };

describe('completion notices reach the parent session', () => {
  it('an idle parent gets one completion turn carrying the outcome, acknowledged in the commit that admits it', async () => {
    const a = await start([
      hello,
      // Played out after this step: the fake then echoes the last user message.
      { content: 'Delegating.', tool_calls: [{ name: 'delegate_task', arguments: { goal: 'say hi' } }] },
    ]);
    const first = await a.submit({ text: 'hello' });
    await first.outcome;
    const { sessionId } = first;
    const second = await a.submit({ sessionId, text: 'delegate it' });
    expect((await second.outcome).status).toBe('completed');
    const [child] = await a.runtime.controlPlane.listTasks(sessionId);
    expect(child).toMatchObject({ kind: 'agent.spawn', title: expect.any(String) });

    const started = await endedTurn(a, sessionId, 3);
    const turnId = started.streamId;
    const [input, answer] = await messagesOfTurn(a, sessionId, turnId);
    expect(input!.role).toBe('user');
    expect(input!.text).toMatch(
      new RegExp(`^\\[task completion\\] Task ${child!.taskId} ".+" \\(agent.spawn\\) completed\\.`),
    );
    expect(input!.text).toContain('Summary: Hi.');
    // The model saw the notice: the fake echoes the last user message once its script is played out.
    expect(answer).toMatchObject({ role: 'assistant', text: `[fake] ${input!.text}` });

    const commit = await commitOf(a, started);
    expect(commit.map((e) => e.type)).toEqual(
      expect.arrayContaining(['turn.started', 'work.claimed', 'work.acknowledged', 'task.completion_acknowledged']),
    );
    expect(commit.find((e) => e.type === 'work.acknowledged')!.streamId).toBe(completionWorkId(child!.taskId));
    expect(commit.find((e) => e.type === 'task.completion_acknowledged')!.data).toMatchObject({
      taskId: child!.taskId,
      consumer: `session ${sessionId} (turn ${turnId})`,
    });
    expect(started.meta.actor).toEqual({ kind: 'system', id: 'completion-notices' });

    await sleep(1_500);
    expect(await turnsOf(a, sessionId)).toHaveLength(3);
    expect((await a.runtime.host.status()).pendingCompletions).toEqual([]);
    expect(await a.runtime.controlPlane.getTask({ sessionId, taskId: child!.taskId })).toMatchObject({
      completion: 'acknowledged',
    });
    expect((await verifyLog(a.store.iterate())).violations).toEqual([]);
  });

  it('a busy parent takes the notice with its next input (queue, not interrupt); no extra turn', async () => {
    const a = await start([
      {
        content: 'Building in the background while I wait.',
        tool_calls: [
          { name: 'shell', arguments: { command: 'echo built', background: true } },
          { name: 'shell', arguments: { command: 'sleep 1.5' } },
        ],
      },
      { content: 'Started the build.' },
    ]);
    const first = await a.submit({ text: 'build it' });
    const { sessionId } = first;
    const next = a.submit({ sessionId, text: 'what now?' }); // waits for the first turn: the session is busy
    expect((await first.outcome).status).toBe('completed');
    const second = await next;
    expect((await second.outcome).status).toBe('completed');
    const [task] = await a.runtime.controlPlane.listTasks(sessionId);
    expect(task).toMatchObject({ kind: 'terminal.exec', status: 'completed', completion: 'acknowledged' });

    const [, started] = await turnsOf(a, sessionId);
    expect(started!.streamId).toBe(second.turnId);
    const context = (started!.data as { context?: { role: string; text: string }[] }).context ?? [];
    const notice = context.find((c) => c.text.startsWith('[task completion]'));
    expect(notice).toMatchObject({ role: 'system' });
    expect(notice!.text).toContain(`Task ${task!.taskId} "echo built" (terminal.exec) completed.`);
    expect(notice!.text).toContain('Exit code: 0');
    expect(notice!.text).toMatch(/\nArtifacts: stdout \S+ \(6 bytes\); stderr \S+ \(0 bytes\)$/);
    const messages = await messagesOfTurn(a, sessionId, second.turnId);
    expect(messages.map((m) => [m.role, m.text.slice(0, 17)])).toEqual([
      ['system', '[task completion]'],
      ['user', 'what now?'],
      ['assistant', expect.any(String)],
    ]);
    const commit = await commitOf(a, started!);
    expect(commit.map((e) => e.type)).toEqual(
      expect.arrayContaining(['task.completion_acknowledged', 'work.acknowledged']),
    );

    await sleep(1_500);
    expect(await turnsOf(a, sessionId)).toHaveLength(2);
    expect((await a.runtime.host.status()).pendingCompletions).toEqual([]);
  });

  it('a task cancelled with its run (an interrupt) starts no completion turn; the next input carries its notice', async () => {
    const a = await start([
      {
        content: 'Starting the long job, then waiting.',
        tool_calls: [
          { name: 'shell', arguments: { command: 'sleep 30', background: true } },
          { name: 'shell', arguments: { command: 'test -f stop || sleep 30' } },
        ],
      },
      { content: 'Noted.' },
    ]);
    const first = await a.submit({ text: 'run the long job' });
    const { sessionId } = first;
    await until('the foreground call to start', async () =>
      (await a.store.readAll()).some((e) => e.type === 'tool_call.process_started') ? true : undefined,
    );
    expect(await a.interrupt(sessionId, 'interrupted: Ctrl-C')).toBe(1);
    expect((await first.outcome).status).toBe('cancelled');
    const [task] = await a.runtime.controlPlane.listTasks(sessionId);
    expect(task).toMatchObject({ kind: 'terminal.exec', status: 'cancelled' });

    // The loop sees the pending notice but starts no turn: a model turn right after an interrupt would undo it.
    const round = await a.deliverCompletions();
    expect(round).toMatchObject({ started: [], quiet: [sessionId] });
    await sleep(1_500);
    expect(await turnsOf(a, sessionId)).toHaveLength(1);
    expect((await a.runtime.host.status()).pendingCompletions).toHaveLength(1);

    // The operator's next input takes it as context, acknowledged in its admission. (The interrupted turn kept
    // no reply, so the fake provider plays the same step again: its foreground call now ends at once.)
    writeFileSync(join(workspace, 'stop'), '');
    const second = await a.submit({ sessionId, text: 'what happened?' });
    expect((await second.outcome).status).toBe('completed');
    const [, started] = await turnsOf(a, sessionId);
    const context = (started!.data as { context?: { role: string; text: string }[] }).context ?? [];
    expect(context.find((c) => c.text.startsWith('[task completion]'))?.text).toContain('cancelled');
    expect((await a.runtime.host.status()).pendingCompletions).toEqual([]);
  });

  it('yield_until in a busy turn consumes the notice: no completion turn follows', async () => {
    const a = await start([
      {
        content: 'Building while I wait.',
        tool_calls: [
          { name: 'shell', arguments: { command: 'echo built', background: true } },
          { name: 'shell', arguments: { command: 'sleep 2' } },
        ],
      },
      { content: 'Built.' },
    ]);
    const first = await a.submit({ text: 'build it' });
    const { sessionId } = first;
    const task = await until('the build to end', async () => {
      const [t] = await a.runtime.controlPlane.listTasks(sessionId);
      return t?.completion === 'ready' ? t : undefined;
    });
    // The model's yield_until, while its turn still runs (the session is busy: the loop leaves the notice).
    const waited = await a.runtime.tools.get('yield_until')!.run(
      { task_id: task.taskId, timeout_seconds: 5 },
      {
        workspaceRoot: workspace,
        signal: new AbortController().signal,
        sessionId,
        turnId: first.turnId,
        runId: first.runId,
        toolCallId: 'tcl_01JD5Y7Q6N0000000000000001',
      },
    );
    expect(JSON.parse(waited.output)).toMatchObject({ status: 'completed', timed_out: false });
    expect((await first.outcome).status).toBe('completed');
    await sleep(1_500);
    expect(await turnsOf(a, sessionId)).toHaveLength(1);
    const acks = (await a.store.readStream(task.taskId)).filter((e) => e.type === 'task.completion_acknowledged');
    expect(acks.map((e) => (e.data as { consumer: string }).consumer)).toEqual([`session ${sessionId} (yield_until)`]);
  });

  it('a silent task never notifies', async () => {
    const a = await start([
      hello,
      {
        content: 'Delegating quietly.',
        tool_calls: [{ name: 'delegate_task', arguments: { goal: 'say hi', notify_policy: 'silent' } }],
      },
      { content: 'Delegated.' },
    ]);
    const first = await a.submit({ text: 'hello' });
    await first.outcome;
    const { sessionId } = first;
    await (await a.submit({ sessionId, text: 'delegate quietly' })).outcome;
    const [child] = await a.runtime.controlPlane.listTasks(sessionId);
    await until('the silent child to finish', async () => {
      const task = await a.runtime.controlPlane.getTask({ sessionId, taskId: child!.taskId });
      return task.status === 'completed' ? task : undefined;
    });
    await sleep(1_500);
    expect(await turnsOf(a, sessionId)).toHaveLength(2);
    expect((await a.store.readAll()).filter((e) => e.type === 'task.completion_ready')).toEqual([]);
  });

  it('a blocked task tells its parent that it needs the user, then its end is told too', async () => {
    const a = await start([hello]);
    const first = await a.submit({ text: 'hello' });
    await first.outcome;
    const { sessionId } = first;
    const { controlPlane } = a.runtime;
    // A task kind this host has no handler for stays where the test puts it.
    const task = await controlPlane.submitTask({
      sessionId,
      kind: 'evolver.run',
      title: 'tune the prompts',
      input: { goal: 'tune' },
    });
    const ref = { sessionId, taskId: task.taskId };
    await controlPlane.startTask(ref, 'test-worker');
    await controlPlane.blockTask(ref, 'the user must approve the new prompts', true);

    const blockedTurn = await endedTurn(a, sessionId, 2);
    const [blockedInput] = await messagesOfTurn(a, sessionId, blockedTurn.streamId);
    expect(blockedInput!.text).toBe(
      `[task blocked] Task ${task.taskId} "tune the prompts" (evolver.run) is blocked and needs the user: ` +
        'the user must approve the new prompts.\nIt continues once the user unblocks it.',
    );
    await controlPlane.resumeTask(ref);
    await controlPlane.completeTask(ref, { summary: 'prompts tuned' });
    const doneTurn = await endedTurn(a, sessionId, 3);
    const [doneInput] = await messagesOfTurn(a, sessionId, doneTurn.streamId);
    expect(doneInput!.text).toContain(
      `[task completion] Task ${task.taskId} "tune the prompts" (evolver.run) completed.`,
    );
    expect(doneInput!.text).toContain('Summary: prompts tuned');
    expect(
      (await a.store.readStream(task.taskId)).filter((e) => e.type === 'task.completion_acknowledged'),
    ).toHaveLength(2);
    expect((await verifyLog(a.store.iterate())).violations).toEqual([]);
  });

  it('notices of deleted or archived tasks are settled, never pending and never delivered', async () => {
    // No loops: the notices wait while nothing serves, as after `run` or between hosts.
    let a = await start([hello], { background: false });
    const first = await a.submit({ text: 'hello' });
    await first.outcome;
    const { sessionId } = first;
    const { controlPlane } = a.runtime;
    const submit = async (title: string) => {
      const t = await controlPlane.submitTask({ sessionId, kind: 'evolver.run', title, input: { goal: title } });
      const ref = { sessionId, taskId: t.taskId };
      await controlPlane.startTask(ref, 'test-worker');
      return ref;
    };
    const deleted = await submit('to delete');
    await controlPlane.cancelTask(deleted, 'not needed');
    const archived = await submit('to archive');
    await controlPlane.completeTask(archived, { summary: 'done' });
    // An old log: a task archived before notices were settled with it (appended as such a host did).
    const legacy = await submit('archived by an old host');
    await controlPlane.completeTask(legacy, { summary: 'done' });
    expect((await a.runtime.host.status()).pendingCompletions).toHaveLength(3);
    await controlPlane.deleteTask(deleted, 'cleanup');
    await controlPlane.archiveTask(archived);
    await a.store.append({
      streamType: 'task',
      streamId: legacy.taskId,
      expectedVersion: await a.store.streamVersion(legacy.taskId),
      events: [{ type: 'task.archived', data: { taskId: legacy.taskId } }],
    });
    expect((await a.runtime.work.get(completionWorkId(deleted.taskId))).status).toBe('cancelled');
    expect((await a.runtime.work.get(completionWorkId(archived.taskId))).status).toBe('cancelled');
    expect((await a.runtime.work.get(completionWorkId(legacy.taskId))).status).toBe('queued');
    await a.close();

    a = await start([hello]);
    await until('the old notice to be settled', async () =>
      (await a.runtime.work.get(completionWorkId(legacy.taskId))).status === 'cancelled' ? true : undefined,
    );
    await sleep(1_000);
    expect(await turnsOf(a, sessionId)).toHaveLength(1);
    const status = await a.runtime.host.status();
    expect(status.pendingCompletions).toEqual([]);
    expect(status.counts['work/task.completion/queued']).toBeUndefined();
    expect(status.counts['work/task.completion/cancelled']).toBe(3);
    expect((await verifyLog(a.store.iterate())).violations).toEqual([]);
  });

  it('notices to an archived session are settled: it takes no turns', async () => {
    let a = await start([hello], { background: false });
    const first = await a.submit({ text: 'hello' });
    await first.outcome;
    const { sessionId } = first;
    const { controlPlane } = a.runtime;
    const t = await controlPlane.submitTask({ sessionId, kind: 'evolver.run', title: 'late', input: { goal: 'x' } });
    await controlPlane.startTask({ sessionId, taskId: t.taskId }, 'test-worker');
    await controlPlane.completeTask({ sessionId, taskId: t.taskId }, { summary: 'done' });
    await a.runtime.sessions.archive(sessionId, 'finished');
    await a.close();

    a = await start([hello]);
    await until('the notice to be settled', async () =>
      (await a.runtime.work.get(completionWorkId(t.taskId))).status === 'cancelled' ? true : undefined,
    );
    expect(await turnsOf(a, sessionId)).toHaveLength(1);
    expect((await a.runtime.host.status()).pendingCompletions).toEqual([]);
  });
});
