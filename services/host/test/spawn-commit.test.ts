import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isEvent, type RecordedEvent } from '@demiurge/contracts';
import type { AppendStream } from '@demiurge/event-store';
import { verifyLog } from '@demiurge/lifecycle';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DemiurgeApp } from '../src/index.js';

let home: string;
let workspace: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'demiurge-host-'));
  workspace = mkdtempSync(join(tmpdir(), 'demiurge-ws-'));
});
afterEach(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

/** Every commit (store.append call that appended), as its events, in order. */
function recordCommits(app: DemiurgeApp): RecordedEvent[][] {
  const commits: RecordedEvent[][] = [];
  const store = app.store;
  const append = store.append.bind(store);
  store.append = (async (streams: AppendStream | readonly AppendStream[], options?: never) => {
    const result = await append(streams, options);
    if (!result.replayed) commits.push([...result.events]);
    return result;
  }) as typeof store.append;
  return commits;
}

const waitFor = async (what: string, check: () => Promise<boolean>) => {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
};

describe('spawning a child agent is one commit', () => {
  it("delegate_task (fork): the task's start, the child session with its parent, the fork context, the goal, the run and the turn commit at once", async () => {
    const fakeScript = join(home, 'script.json');
    writeFileSync(
      fakeScript,
      JSON.stringify([
        {
          content: 'Delegating.',
          tool_calls: [{ name: 'delegate_task', arguments: { goal: 'summarise the plan', context_mode: 'fork' } }],
        },
        { content: 'Delegated.' },
      ]),
    );
    const app = await DemiurgeApp.start({ home, overrides: { workspace, fakeScript }, env: {} });
    try {
      const commits = recordCommits(app);
      const submitted = await app.submit({ text: 'plan it' });
      expect((await submitted.outcome).status).toBe('completed');
      const [task] = await app.runtime.controlPlane.listTasks(submitted.sessionId);
      expect(task).toMatchObject({ kind: 'agent.spawn' });
      const ref = { sessionId: submitted.sessionId, taskId: task!.taskId };
      await waitFor('the child task to end', async () =>
        ['completed', 'failed'].includes((await app.runtime.controlPlane.getTask(ref)).status),
      );

      const child = (await app.runtime.sessions.list()).find((s) => s.parent?.taskId === task!.taskId)!;
      expect(child.parent).toEqual({ sessionId: submitted.sessionId, taskId: task!.taskId, depth: 1 });
      const touching = commits.filter((events) =>
        events.some(
          (e) =>
            e.streamId === child.sessionId ||
            (e.streamId === task!.taskId && e.type === 'task.started') ||
            e.meta.sessionId === child.sessionId,
        ),
      );
      const spawn = touching.find((events) => events.some((e) => e.type === 'session.created'))!;
      // Session first (the transcript's order), the fork context before the goal, the task's start with them.
      expect(spawn.map((e) => e.type)).toEqual([
        'session.created',
        'message.recorded',
        'message.recorded',
        'run.queued',
        'run.started',
        'run.owner_claimed',
        'turn.started',
        'task.started',
      ]);
      expect(spawn.flatMap((e) => (isEvent(e, 'message.recorded') ? [[e.data.role, e.data.text]] : []))).toEqual([
        ['system', expect.stringMatching(/^Context from the parent conversation:\nuser: plan it/)],
        ['user', 'summarise the plan'],
      ]);
      expect(new Set(spawn.map((e) => e.position - spawn[0]!.position))).toEqual(new Set(spawn.map((_, i) => i)));
      // Nothing of the child session, and no task.started, was committed before or apart from it.
      expect(touching.indexOf(spawn)).toBe(
        touching.findIndex((events) => events.some((e) => e.streamId === child.sessionId)),
      );
      const started = (events: RecordedEvent[]) =>
        events.some((e) => e.type === 'task.started' && e.streamId === task!.taskId);
      expect(commits.filter(started)).toEqual([spawn]);
      expect((await verifyLog(app.store.iterate())).violations).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
