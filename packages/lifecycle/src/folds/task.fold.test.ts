import type { NewEvent } from '@demiurge/contracts';
import { describe, expect, it } from 'vitest';
import { IllegalTransitionError } from '../errors.js';
import { recordGiven } from '../testing/index.js';
import { evolveTask, initialTaskFacts, LOG_TAIL_LINES, type TaskFacts, taskFold } from './task.fold.js';

const taskId = 'tsk_01JD5Y7Q6N0000000000000000';
const sessionId = 'ses_01JD5Y7Q6N0000000000000000';
const RECORDED = '2026-01-01T00:00:00.000Z';
const e = (type: string, data: Record<string, unknown> = {}): NewEvent => ({ type, data: { taskId, ...data } });
const submitted = (extra: Record<string, unknown> = {}) =>
  e('task.submitted', { sessionId, kind: 'terminal.exec', title: 'ls', ...extra });

/** given (events) → then (the task), through the strict fold and the tolerant one alike. */
function given(...events: NewEvent[]): TaskFacts {
  const recorded = recordGiven(events, 'task', taskId);
  const strict = recorded.reduce((s, ev) => taskFold.evolve(s, ev, taskId), initialTaskFacts);
  const tolerant = recorded.reduce<TaskFacts>((s, ev) => evolveTask(s, ev) ?? s, initialTaskFacts);
  expect(tolerant).toEqual(strict);
  return strict;
}

describe('the task fold', () => {
  it('follows a task from submit to its end, with its notice', () => {
    expect(given(submitted({ input: { command: 'ls' }, notifyPolicy: 'silent', runId: 'run_1' }))).toEqual({
      ...initialTaskFacts,
      status: 'created',
      taskId,
      sessionId,
      runId: 'run_1',
      kind: 'terminal.exec',
      title: 'ls',
      input: { command: 'ls' },
      notifyPolicy: 'silent',
      submittedAt: RECORDED,
    });
    const done = given(
      submitted(),
      e('task.started', { worker: 'w1' }),
      e('task.process_started', { spawnId: 's1', host: 'h', pid: 10, pgid: 10, platform: 'linux' }),
      e('task.artifact_recorded', { artifactId: 'a1', name: 'stdout', path: '/tmp/o', bytes: 3 }),
      e('task.completed', { summary: 'ok', exitCode: 0 }),
      e('task.completion_ready', { outcome: 'completed' }),
    );
    expect(done).toMatchObject({
      status: 'completed',
      notifyPolicy: 'return_to_parent',
      worker: 'w1',
      summary: 'ok',
      exitCode: 0,
      completion: 'ready',
      process: { spawnId: 's1', host: 'h', pid: 10, pgid: 10, platform: 'linux', startMarker: null, at: RECORDED },
      artifacts: [{ artifactId: 'a1', name: 'stdout', path: '/tmp/o', bytes: 3, sha256: null, at: RECORDED }],
    });
  });

  it('keeps blocked only while blocked, the last log lines, the cancel reason and its cleanup error', () => {
    const blocked = given(
      submitted(),
      e('task.started', { worker: 'w' }),
      e('task.blocked', { reason: 'r', resumable: false }),
    );
    expect(blocked.blocked).toEqual({ reason: 'r', resumable: false });
    const resumed = given(
      submitted(),
      e('task.started', { worker: 'w' }),
      e('task.blocked', { reason: 'r', resumable: true }),
      e('task.resumed'),
    );
    expect(resumed).toMatchObject({ status: 'active', blocked: null });
    const texts = Array.from({ length: LOG_TAIL_LINES + 3 }, (_, i) => `l${i}`);
    const logged = given(submitted(), ...texts.map((text) => e('task.log', { stream: 'stdout', text })));
    expect(logged.logTail.map((l) => l.text)).toEqual(texts.slice(3));
    const cancelled = given(
      submitted(),
      e('task.cancelled', { reason: 'stop', cleanupError: { type: 'Error', message: 'kill failed' } }),
      e('task.deleted'),
    );
    expect(cancelled).toMatchObject({
      status: 'deleted',
      hidden: true,
      cancelReason: 'stop',
      cleanupError: { type: 'Error', message: 'kill failed' },
    });
    expect('cleanupError' in given(submitted(), e('task.cancelled', { reason: 'stop' }))).toBe(false);
  });

  it('refuses what the machine refuses: strict throws naming the task, tolerant skips', () => {
    const [sub, resumed] = recordGiven([submitted(), e('task.resumed')], 'task', taskId);
    const state = taskFold.evolve(initialTaskFacts, sub!, taskId);
    expect(() => taskFold.evolve(state, resumed!, taskId)).toThrow(IllegalTransitionError);
    expect(() => taskFold.evolve(state, resumed!, taskId)).toThrow(taskId);
    expect(evolveTask(state, resumed!)).toBeUndefined();
    expect(evolveTask(initialTaskFacts, resumed!)).toBeUndefined();
  });
});
