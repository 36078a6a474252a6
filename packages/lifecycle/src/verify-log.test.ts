import { type Actor, type IdGenerator, IdPrefix, type SessionId, type TaskId, type WorkId } from '@demiurge/contracts';
import { createFakeClock, createSeededIdGenerator } from '@demiurge/contracts/testing';
import { type AppendStream, createInMemoryEventStore, type EventStore } from '@demiurge/event-store';
import { describe, expect, it } from 'vitest';
import { asAsync, recordLog } from '../test/support.js';
import { createDecider, foldState, type LogViolation, taskLifecycle, verifyLog } from './index.js';

const user: Actor = { kind: 'user', id: 'demo-user' };
const error = { code: 'adapter', message: 'channel timed out' };

/** The session `demiurge demo` appends (services/cli sample-session), one append per step. */
async function appendDemoSession(store: EventStore, ids: IdGenerator): Promise<SessionId> {
  const sessionId = ids.next(IdPrefix.session) as SessionId;
  let version = 0;
  const append = async (events: AppendStream['events']) => {
    const expectedVersion = version === 0 ? 'no_stream' : version;
    version += (await store.append({ streamType: 'session', streamId: sessionId, expectedVersion, events })).events
      .length;
  };
  await append([
    {
      type: 'session.created',
      data: {
        sessionId,
        title: 'Demo',
        coreId: 'default',
        binding: { coreId: 'default', channel: 'cli', conversationKey: 'demo' },
      },
    },
  ]);
  for (const [question, answer] of [
    ['Plan a trip.', 'Day 1 and day 2.'],
    ['Add a budget.', 'About 180 EUR.'],
  ] as const) {
    const turnId = ids.next(IdPrefix.turn);
    const inputId = ids.next(IdPrefix.message);
    const outputId = ids.next(IdPrefix.message);
    await append([
      { type: 'turn.started', data: { turnId, sessionId, inputMessageId: inputId } },
      {
        type: 'message.recorded',
        data: { messageId: inputId, sessionId, turnId, role: 'user', text: question, visibility: 'persist' },
      },
    ]);
    await append([
      {
        type: 'message.recorded',
        data: { messageId: outputId, sessionId, turnId, role: 'assistant', text: answer, visibility: 'persist' },
      },
      { type: 'turn.completed', data: { turnId, sessionId, outputMessageId: outputId } },
    ]);
  }
  return sessionId;
}

/** A task through the seed's whole path, and a work item that fails once, retries, sends and is acknowledged. */
async function appendTaskAndWork(store: EventStore, ids: IdGenerator, sessionId: SessionId): Promise<void> {
  const taskId = ids.next(IdPrefix.task) as TaskId;
  const workId = ids.next(IdPrefix.work) as WorkId;
  const task = (expectedVersion: number | 'no_stream', events: AppendStream['events']): AppendStream => ({
    streamType: 'task',
    streamId: taskId,
    expectedVersion,
    events,
  });
  await store.append(
    task('no_stream', [
      { type: 'task.submitted', data: { taskId, sessionId, kind: 'terminal.exec', title: 'ls -la' } },
      { type: 'task.started', data: { taskId, worker: 'worker-1' } },
      { type: 'task.log', data: { taskId, stream: 'stdout', text: 'total 0' } },
      { type: 'task.blocked', data: { taskId, reason: 'needs approval', resumable: true } },
      { type: 'task.resumed', data: { taskId } },
      { type: 'task.completed', data: { taskId, exitCode: 0 } },
      { type: 'task.completion_ready', data: { taskId, outcome: 'completed' } },
    ]),
    { meta: { actor: user } },
  );
  const leaseUntil = '2026-01-01T00:01:00.000Z';
  await store.append({
    streamType: 'work',
    streamId: workId,
    expectedVersion: 'no_stream',
    events: [
      { type: 'work.enqueued', data: { workId, kind: 'task.completion', subjectId: taskId } },
      { type: 'work.claimed', data: { workId, claimToken: 'c1', attempt: 1, owner: 'host-a', leaseUntil } },
      { type: 'work.running', data: { workId, claimToken: 'c1' } },
      { type: 'work.failed', data: { workId, claimToken: 'c1', error, retryAt: '2026-01-01T00:00:30.000Z' } },
      { type: 'work.claimed', data: { workId, claimToken: 'c2', attempt: 2, owner: 'host-a', leaseUntil } },
      { type: 'work.heartbeat', data: { workId, claimToken: 'c2', leaseUntil } },
      { type: 'work.succeeded', data: { workId, claimToken: 'c2' } },
      { type: 'work.acknowledged', data: { workId, claimToken: 'c2' } },
    ],
  });
  await store.append(
    task(7, [
      { type: 'task.completion_acknowledged', data: { taskId, consumer: 'parent' } },
      { type: 'task.archived', data: { taskId } },
    ]),
  );
}

function freshStore() {
  const clock = createFakeClock();
  return { store: createInMemoryEventStore({ clock }), ids: createSeededIdGenerator(clock, 7) };
}

describe('verifyLog', () => {
  it('finds nothing wrong in the log `demiurge demo` writes, with tasks and work items beside it', async () => {
    const { store, ids } = freshStore();
    const sessionId = await appendDemoSession(store, ids);
    await appendDemoSession(store, ids);
    await appendTaskAndWork(store, ids, sessionId);
    const report = await verifyLog(store.iterate({ batchSize: 4 }));
    expect(report).toMatchObject({ ok: true, eventsChecked: await store.head(), streams: 4, violationCount: 0 });
    await store.close();
  });

  it('reports exactly one injected illegal event, at its position', async () => {
    const entries = [
      { streamType: 'task', streamId: 't1', type: 'task.submitted' },
      { streamType: 'session', streamId: 's1', type: 'session.created' },
      { streamType: 'task', streamId: 't1', type: 'task.started' },
      { streamType: 'task', streamId: 't1', type: 'task.cancelled' },
      { streamType: 'task', streamId: 't1', type: 'task.resumed' }, // illegal: cancelled never resumes
      { streamType: 'task', streamId: 't1', type: 'task.deleted' },
      { streamType: 'session', streamId: 's1', type: 'message.recorded' },
      { streamType: 'task', streamId: 't1', type: 'task.archived' },
    ];
    const report = await verifyLog(recordLog(entries));
    expect(report.violations).toEqual([
      {
        kind: 'illegal_transition',
        streamType: 'task',
        streamId: 't1',
        streamVersion: 4,
        position: 5,
        state: 'cancelled',
        event: 'task.resumed',
        allowed: ['task.deleted', 'task.archived', 'task.completion_ready', 'task.completion_acknowledged'],
        message:
          'position 5 (task t1 v4): task t1 is cancelled; task.resumed is not allowed; allowed: task.deleted, task.archived, task.completion_ready, task.completion_acknowledged',
      },
    ]);
  });

  it('flags a duplicate of an idempotent command in the log, though a decider would have appended nothing', async () => {
    const report = await verifyLog(
      recordLog([
        { streamType: 'task', streamId: 't1', type: 'task.submitted' },
        { streamType: 'task', streamId: 't1', type: 'task.cancelled' },
        { streamType: 'task', streamId: 't1', type: 'task.cancelled' },
      ]),
    );
    expect(report.violations.map((v) => [v.kind, v.position, v.state])).toEqual([
      ['illegal_transition', 3, 'cancelled'],
    ]);
  });

  it('flags a creation event on an existing stream and an event before creation', async () => {
    const report = await verifyLog(
      recordLog([
        { streamType: 'run', streamId: 'r1', type: 'run.started' },
        { streamType: 'run', streamId: 'r1', type: 'run.queued' },
        { streamType: 'run', streamId: 'r1', type: 'run.queued' },
      ]),
    );
    expect(report.violations.map((v) => [v.position, v.state, v.event, v.allowed[0]])).toEqual([
      [1, 'none', 'run.started', 'run.queued'],
      [3, 'queued', 'run.queued', 'run.started'],
    ]);
    expect(report.violations[0]!.message).toContain('run r1 does not exist yet; run.started is not allowed');
  });

  it('flags event types a machine does not know', async () => {
    const report = await verifyLog(
      recordLog([
        { streamType: 'task', streamId: 't1', type: 'task.submitted' },
        { streamType: 'task', streamId: 't1', type: 'run.started' },
      ]),
    );
    expect(report.violations).toMatchObject([
      {
        kind: 'unknown_event',
        position: 2,
        state: 'created',
        event: 'run.started',
        allowed: ['task.started', 'task.cancelled', 'task.log'],
      },
    ]);
    expect(report.violations[0]!.message).toContain('run.started is not a task event');
  });

  it('checks version contiguity on every stream, including stream types without a machine', async () => {
    const report = await verifyLog(
      recordLog([
        { streamType: 'artifact', streamId: 'a1', type: 'artifact.stored' },
        { streamType: 'artifact', streamId: 'a1', type: 'artifact.stored', streamVersion: 3 },
        { streamType: 'task', streamId: 't1', type: 'task.submitted', streamVersion: 2 },
        { streamType: 'task', streamId: 't1', type: 'task.started', streamVersion: 3 },
        { streamType: 'task', streamId: 't1', type: 'task.log', streamVersion: 3 },
      ]),
    );
    expect(report.violations.map((v) => [v.kind, v.position, v.expectedVersion])).toEqual([
      ['version_gap', 2, 2],
      ['version_gap', 3, 1],
      ['version_gap', 5, 4],
    ]);
    expect(report.streams).toBe(2);
  });

  it('reads sync and async iterables alike, streams violations to onViolation and caps what it keeps', async () => {
    const entries = Array.from({ length: 50 }, (_, i) => ({
      streamType: 'approval',
      streamId: `a${i}`,
      type: 'approval.granted',
    }));
    const seen: LogViolation[] = [];
    const report = await verifyLog(asAsync(recordLog(entries)), { maxViolations: 3, onViolation: (v) => seen.push(v) });
    expect(report).toMatchObject({ ok: false, eventsChecked: 50, streams: 50, violationCount: 50 });
    expect(report.violations).toHaveLength(3);
    expect(seen).toHaveLength(50);
    expect(await verifyLog(recordLog(entries), { maxViolations: 3 })).toEqual(report);
  });
});

describe('a command handler: load state → decide (machine-checked) → append', () => {
  const cancelTask = createDecider(taskLifecycle, {
    streamId: (command: { taskId: TaskId; reason: string }) => command.taskId,
    decide: (command) => [{ type: 'task.cancelled', data: { taskId: command.taskId, reason: command.reason } }],
  });

  it('appends a cancellation once; repeating the command appends nothing, and the log stays clean', async () => {
    const { store, ids } = freshStore();
    const sessionId = ids.next(IdPrefix.session) as SessionId;
    const taskId = ids.next(IdPrefix.task) as TaskId;
    await store.append({
      streamType: 'task',
      streamId: taskId,
      expectedVersion: 'no_stream',
      events: [{ type: 'task.submitted', data: { taskId, sessionId, kind: 'agent.spawn', title: 'research' } }],
    });
    const handle = async (reason: string) => {
      const stream = await store.readStream(taskId);
      const events = cancelTask.decide({ taskId, reason }, foldState(taskLifecycle, stream, taskId));
      if (events.length === 0) return 0;
      return (await store.append({ streamType: 'task', streamId: taskId, expectedVersion: stream.length, events }))
        .events.length;
    };
    expect(await handle('user asked')).toBe(1);
    expect(await handle('user asked again')).toBe(0);
    expect(foldState(taskLifecycle, await store.readStream(taskId))).toBe('cancelled');
    expect((await verifyLog(store.iterate())).ok).toBe(true);
    await store.close();
  });
});
