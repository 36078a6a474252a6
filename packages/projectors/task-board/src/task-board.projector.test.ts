import type { NewEvent } from '@demiurge/contracts';
import { createFakeClock, createSeededIdGenerator } from '@demiurge/contracts/testing';
import { createInMemoryEventStore, type EventStore } from '@demiurge/event-store';
import { describe, expect, it } from 'vitest';
import {
  type BoardEntry,
  boardLanePrefix,
  type SessionTaskEntry,
  sessionPrefix,
  TaskBoardCollections,
  type TaskView,
  taskBoardProjector,
} from './index.js';

function setup() {
  const clock = createFakeClock();
  const ids = createSeededIdGenerator(clock, 5);
  const store = createInMemoryEventStore({ projectors: [taskBoardProjector], clock, ids });
  const reader = store.projection('task-board');
  const sessionId = ids.next('ses');
  const submit = async (title: string, extra: Record<string, unknown> = {}) => {
    const taskId = ids.next('tsk');
    await task(store, taskId, {
      type: 'task.submitted',
      data: { taskId, sessionId, kind: 'terminal.exec', title, ...extra },
    });
    return taskId;
  };
  const lanes = async () =>
    Object.fromEntries(
      await Promise.all(
        (['active', 'waiting', 'blocked', 'done'] as const).map(async (lane) => [
          lane,
          (await reader.list<BoardEntry>('board', { prefix: boardLanePrefix(sessionId, lane) })).map((e) => e.title),
        ]),
      ),
    );
  return { store, ids, clock, reader, sessionId, submit, lanes };
}

const task = (store: EventStore, taskId: string, ...events: NewEvent[]) =>
  store.append({ streamType: 'task', streamId: taskId, expectedVersion: 'any', events });

describe('task-board projector', () => {
  it('puts tasks in the lanes of their status', async () => {
    const { store, ids, reader, sessionId, submit, lanes, clock } = setup();
    const runId = ids.next('run');
    const a = await submit('build', { runId, input: { command: 'make' }, notifyPolicy: 'silent' });
    const b = await submit('test');
    const c = await submit('lint');
    expect(await reader.get<TaskView>(TaskBoardCollections.tasks, a)).toEqual({
      taskId: a,
      sessionId,
      runId,
      parentTaskId: null,
      kind: 'terminal.exec',
      title: 'build',
      input: { command: 'make' },
      notifyPolicy: 'silent',
      status: 'created',
      lane: 'active',
      hidden: false,
      blocked: null,
      cancelReason: null,
      error: null,
      exitCode: null,
      summary: null,
      worker: null,
      logTail: [],
      process: null,
      artifacts: [],
      completion: 'none',
      submittedAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      version: 1,
      allowed: ['task.started', 'task.cancelled', 'task.log'],
    });
    expect(await lanes()).toEqual({ active: ['build', 'test', 'lint'], waiting: [], blocked: [], done: [] });

    clock.advance(1000);
    for (const id of [a, b, c]) await task(store, id, { type: 'task.started', data: { taskId: id, worker: 'w1' } });
    await task(store, b, { type: 'task.waiting', data: { taskId: b, reason: 'child task' } });
    await task(store, c, { type: 'task.blocked', data: { taskId: c, reason: 'approval', resumable: true } });
    await task(store, a, { type: 'task.completed', data: { taskId: a, summary: 'built', exitCode: 0 } });
    expect(await lanes()).toEqual({ active: [], waiting: ['test'], blocked: ['lint'], done: ['build'] });
    expect(await reader.get<TaskView>('tasks', c)).toMatchObject({
      status: 'blocked',
      blocked: { reason: 'approval', resumable: true },
      worker: 'w1',
      allowed: [
        'task.resumed',
        'task.failed',
        'task.cancelled',
        'task.log',
        'task.completion_ready',
        'task.completion_acknowledged',
      ],
    });
    expect(await reader.get<TaskView>('tasks', a)).toMatchObject({ summary: 'built', exitCode: 0, lane: 'done' });

    await task(store, c, { type: 'task.resumed', data: { taskId: c } });
    await task(store, b, {
      type: 'task.failed',
      data: { taskId: b, error: { code: 'exit', message: 'exit 2' }, exitCode: 2 },
    });
    expect(await lanes()).toEqual({ active: ['lint'], waiting: [], blocked: [], done: ['build', 'test'] });
    expect(await reader.get<TaskView>('tasks', c)).toMatchObject({ status: 'active', blocked: null });
    expect(await reader.get<TaskView>('tasks', b)).toMatchObject({
      error: { code: 'exit', message: 'exit 2' },
      exitCode: 2,
      updatedAt: '2026-01-01T00:00:01.000Z',
    });
  });

  it('moves a cancelled task out of the active lanes, and hides a deleted one while keeping it for audit', async () => {
    const { store, reader, sessionId, submit, lanes } = setup();
    const queued = await submit('never started');
    const running = await submit('running');
    await task(store, running, { type: 'task.started', data: { taskId: running, worker: 'w' } });
    await task(store, queued, { type: 'task.cancelled', data: { taskId: queued, reason: 'not needed' } });
    await task(store, running, { type: 'task.cancelled', data: { taskId: running, reason: 'user stop' } });
    expect(await lanes()).toEqual({ active: [], waiting: [], blocked: [], done: ['never started', 'running'] });
    expect(await reader.get<TaskView>('tasks', running)).toMatchObject({
      status: 'cancelled',
      cancelReason: 'user stop',
      allowed: ['task.deleted', 'task.archived', 'task.completion_ready', 'task.completion_acknowledged'],
    });

    await task(store, running, { type: 'task.deleted', data: { taskId: running } });
    expect(await lanes()).toEqual({ active: [], waiting: [], blocked: [], done: ['never started'] });
    expect(await reader.list('board', { prefix: sessionPrefix(sessionId) })).toHaveLength(1);
    expect(await reader.get<TaskView>('tasks', running)).toMatchObject({
      status: 'deleted',
      lane: null,
      hidden: true,
      cancelReason: 'user stop',
      allowed: ['task.archived'],
    });
    expect(await reader.list<SessionTaskEntry>('by-session', { prefix: sessionPrefix(sessionId) })).toEqual([
      { taskId: queued, status: 'cancelled', hidden: false },
      { taskId: running, status: 'deleted', hidden: true },
    ]);

    // Resume cannot resurrect a deleted task: the machine refuses, the board does not move.
    const before = await reader.dump();
    await task(
      store,
      running,
      { type: 'task.resumed', data: { taskId: running } },
      { type: 'task.started', data: { taskId: running, worker: 'w' } },
    );
    expect(await reader.dump()).toEqual(before);

    await task(store, running, { type: 'task.archived', data: { taskId: running } });
    await task(store, queued, { type: 'task.archived', data: { taskId: queued } });
    expect(await lanes()).toEqual({ active: [], waiting: [], blocked: [], done: [] });
    expect(await reader.get<TaskView>('tasks', running)).toMatchObject({
      status: 'archived',
      hidden: true,
      lane: null,
    });
    expect(await reader.get<TaskView>('tasks', queued)).toMatchObject({ status: 'archived', hidden: false });
  });

  it('keeps only the last 20 log lines of a task, oldest first', async () => {
    const { store, reader, submit, clock } = setup();
    const taskId = await submit('chatty');
    await task(store, taskId, { type: 'task.started', data: { taskId, worker: 'w' } });
    for (let i = 1; i <= 25; i++) {
      clock.advance(10);
      await task(store, taskId, {
        type: 'task.log',
        data: { taskId, stream: i % 5 === 0 ? 'stderr' : 'stdout', text: `line ${i}` },
      });
    }
    const view = await reader.get<TaskView>('tasks', taskId);
    expect(view?.logTail).toHaveLength(20);
    expect(view?.logTail.map((l) => l.text)).toEqual(Array.from({ length: 20 }, (_, i) => `line ${i + 6}`));
    expect(view?.logTail[0]).toEqual({ stream: 'stdout', text: 'line 6', at: '2026-01-01T00:00:00.060Z' });
    expect(view?.logTail[19]).toEqual({ stream: 'stderr', text: 'line 25', at: '2026-01-01T00:00:00.250Z' });
    expect(view?.version).toBe(27);
  });

  it('keeps the recorded process and the artifacts of a task', async () => {
    const { store, reader, submit, clock } = setup();
    const taskId = await submit('exec');
    const sha256 = 'a'.repeat(64);
    await task(
      store,
      taskId,
      { type: 'task.started', data: { taskId, worker: 'h1' } },
      {
        type: 'task.process_started',
        data: {
          taskId,
          spawnId: 'spn-1',
          host: 'h1',
          pid: 4242,
          pgid: 4242,
          platform: 'linux',
          startMarker: 'linux:b:7',
        },
      },
    );
    clock.advance(500);
    await task(
      store,
      taskId,
      {
        type: 'task.artifact_recorded',
        data: { taskId, artifactId: 'art-1', name: 'stdout', path: '/a/stdout', bytes: 12, sha256 },
      },
      { type: 'task.artifact_recorded', data: { taskId, artifactId: 'art-2', name: 'stderr', path: '/a/e', bytes: 0 } },
      { type: 'task.completed', data: { taskId, exitCode: 0 } },
    );
    expect(await reader.get<TaskView>('tasks', taskId)).toMatchObject({
      status: 'completed',
      process: {
        spawnId: 'spn-1',
        host: 'h1',
        pid: 4242,
        pgid: 4242,
        platform: 'linux',
        startMarker: 'linux:b:7',
        at: '2026-01-01T00:00:00.000Z',
      },
      artifacts: [
        { artifactId: 'art-1', name: 'stdout', path: '/a/stdout', bytes: 12, sha256, at: '2026-01-01T00:00:00.500Z' },
        { artifactId: 'art-2', name: 'stderr', path: '/a/e', bytes: 0, sha256: null, at: '2026-01-01T00:00:00.500Z' },
      ],
    });
    // A process or an artifact of a task that is no longer active is refused by the machine: nothing changes.
    const before = await reader.dump();
    await task(store, taskId, {
      type: 'task.artifact_recorded',
      data: { taskId, artifactId: 'art-3', name: 'late', path: '/a/l', bytes: 1 },
    });
    expect(await reader.dump()).toEqual(before);
  });

  it('tracks the completion notice from ready to acknowledged', async () => {
    const { store, reader, submit } = setup();
    const taskId = await submit('child');
    await task(
      store,
      taskId,
      { type: 'task.started', data: { taskId, worker: 'w' } },
      { type: 'task.completed', data: { taskId } },
      { type: 'task.completion_ready', data: { taskId, outcome: 'completed' } },
    );
    expect(await reader.get<TaskView>('tasks', taskId)).toMatchObject({ completion: 'ready', summary: null });
    await task(store, taskId, { type: 'task.completion_acknowledged', data: { taskId, consumer: 'parent' } });
    expect(await reader.get<TaskView>('tasks', taskId)).toMatchObject({ completion: 'acknowledged' });
  });

  it('ignores events for tasks never submitted', async () => {
    const { store, ids, reader } = setup();
    const ghost = ids.next('tsk');
    await task(
      store,
      ghost,
      { type: 'task.started', data: { taskId: ghost, worker: 'w' } },
      { type: 'task.log', data: { taskId: ghost, stream: 'stdout', text: 'boo' } },
    );
    expect(await reader.dump()).toEqual({});
    await store.rebuild();
    expect(await reader.dump()).toEqual({});
  });
});
