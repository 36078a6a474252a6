import { afterEach, describe, expect, it } from 'vitest';
import { demiurge, tempHome } from './cli.js';
import { writeHostHome } from './serve-process.js';

interface LoggedEvent {
  position: number;
  type: string;
  streamId: string;
  data: Record<string, unknown>;
  meta: { runId?: string; turnId?: string; sessionId?: string };
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function events(home: string, ...types: string[]): Promise<LoggedEvent[]> {
  const run = await demiurge(['events', '--json', '--home', home, ...(types.length > 0 ? ['--type', ...types] : [])]);
  expect(run.code).toBe(0);
  return run.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as LoggedEvent);
}

describe('one submit is one commit (the real CLI)', () => {
  it('`demiurge run --plan` on a new home opens the session, sets plan mode and admits the turn in one commit', async () => {
    const home = tempHome();
    cleanups.push(home.remove);
    const run = await demiurge(['run', 'plan this', '--plan', '--json', '--home', home.path]);
    expect(run.stderr).not.toMatch(/unexpected error/i);
    expect(run.code).toBe(0);
    const log = await events(
      home.path,
      'session.created',
      'session.mode_changed',
      'message.recorded',
      'run.queued',
      'turn.started',
    );
    const created = log.find((e) => e.type === 'session.created')!;
    const queued = log.find((e) => e.type === 'run.queued')!;
    const started = log.find((e) => e.type === 'turn.started')!;
    const admission = log.filter((e) => e.position >= created.position && e.position <= started.position);
    expect(admission.map((e) => e.type)).toEqual([
      'session.created',
      'session.mode_changed',
      'message.recorded',
      'run.queued',
      'turn.started',
    ]);
    // One append's meta is every event's meta: the session was opened and switched to plan mode by the
    // commit that admitted the run and the turn (separate commits would carry the session runtime's own meta).
    for (const event of admission) {
      expect(event.meta).toMatchObject({
        runId: queued.streamId,
        turnId: started.streamId,
        sessionId: created.streamId,
      });
    }
  });

  it('a delegate_task starts its task, opens the child session (fork context), and admits its run and turn in one commit', async () => {
    const home = tempHome();
    cleanups.push(home.remove);
    writeHostHome(home.path, {
      script: [
        {
          content: 'Delegating.',
          tool_calls: [
            // The child replays this step (its transcript is empty): with read_file only, its calls are refused.
            { name: 'delegate_task', arguments: { goal: 'say hi', context_mode: 'fork', tools: ['read_file'] } },
            { name: 'shell', arguments: { command: 'sleep 1' } },
          ],
        },
        { content: 'Delegated.' },
      ],
    });
    const run = await demiurge(['run', 'delegate it', '--json', '--home', home.path]);
    expect(run.stderr).not.toMatch(/unexpected error/i);
    expect(run.code).toBe(0);
    const log = await events(home.path);
    const created = log.find((e) => e.type === 'session.created' && e.data.parent)!;
    const { taskId } = created.data.parent as { taskId: string };
    const started = log.find((e) => e.type === 'task.started' && e.streamId === taskId)!;
    const spawn = log.filter((e) => e.position >= created.position && e.position <= started.position);
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
    expect(spawn[1]!.data).toMatchObject({ role: 'system', text: expect.stringMatching(/^Context from the parent/) });
    expect(spawn[2]!.data).toMatchObject({ role: 'user', text: 'say hi' });
    // One append's meta on every event: the child's run and turn, the child session (the task's start too).
    const turn = spawn.at(-2)!;
    for (const event of spawn) {
      expect(event.meta).toMatchObject({ sessionId: created.streamId, turnId: turn.streamId, runId: turn.data.runId });
    }
  });
});
