import type { NewEvent } from '@demiurge/contracts';
import { createFakeClock, createSeededIdGenerator } from '@demiurge/contracts/testing';
import { createInMemoryEventStore } from '@demiurge/event-store';
import { describe, expect, it } from 'vitest';
import {
  LAST_ERROR_ID,
  type NeedsOperatorEntry,
  type OperatorItem,
  OperatorStatusCollections,
  operatorStatusProjector,
  type RunningEntry,
} from './index.js';

function setup() {
  const clock = createFakeClock();
  const ids = createSeededIdGenerator(clock, 21);
  const store = createInMemoryEventStore({ projectors: [operatorStatusProjector], clock, ids });
  const reader = store.projection('operator-status');
  const sessionId = ids.next('ses');
  const at = (ms = 0) => new Date(clock.now() + ms).toISOString();
  const append = (streamType: string, streamId: string, ...events: NewEvent[]) =>
    store.append({ streamType, streamId, expectedVersion: 'any', events });
  const enqueue = async (kind: string) => {
    const workId = ids.next('wrk');
    await append('work', workId, { type: 'work.enqueued', data: { workId, kind, subjectId: 'subject-1' } });
    return workId;
  };
  const claim = (workId: string) =>
    append('work', workId, {
      type: 'work.claimed',
      data: { workId, claimToken: 'tok', attempt: 1, owner: 'host', leaseUntil: at(30_000) },
    });
  const submit = async (title: string) => {
    const taskId = ids.next('tsk');
    await append('task', taskId, { type: 'task.submitted', data: { taskId, sessionId, kind: 'agent.spawn', title } });
    return taskId;
  };
  const queueDelivery = async () => {
    const deliveryId = ids.next('dlv');
    const data = { deliveryId, sessionId, messageId: ids.next('msg'), workId: ids.next('wrk'), channel: 'telegram' };
    await append('delivery', deliveryId, { type: 'delivery.queued', data });
    return deliveryId;
  };
  const counts = async () => (await reader.dump()).counts ?? {};
  return { store, ids, clock, reader, sessionId, at, append, enqueue, claim, submit, queueDelivery, counts };
}

describe('operator-status projector', () => {
  it('counts items by aggregate, kind and status, dropping a count that reaches zero', async () => {
    const { append, enqueue, claim, submit, queueDelivery, counts } = setup();
    const a = await enqueue('delivery.send');
    await enqueue('delivery.send');
    await enqueue('schedule.fire');
    const t = await submit('research');
    await queueDelivery();
    expect(await counts()).toEqual({
      'delivery/telegram/queued': 1,
      'task/agent.spawn/created': 1,
      'work/delivery.send/queued': 2,
      'work/schedule.fire/queued': 1,
    });
    await claim(a);
    await append('task', t, { type: 'task.started', data: { taskId: t, worker: 'w' } });
    expect(await counts()).toEqual({
      'delivery/telegram/queued': 1,
      'task/agent.spawn/active': 1,
      'work/delivery.send/claimed': 1,
      'work/delivery.send/queued': 1,
      'work/schedule.fire/queued': 1,
    });
  });

  it('lists claimed, running and sending work and active tasks as running, since their current status', async () => {
    const { reader, clock, at, append, enqueue, claim, submit } = setup();
    const workId = await enqueue('delivery.send');
    const taskId = await submit('child agent');
    expect(await reader.list('running')).toEqual([]);
    clock.advance(1000);
    await claim(workId);
    await append('task', taskId, { type: 'task.started', data: { taskId, worker: 'w' } });
    expect(await reader.list<RunningEntry>('running')).toEqual([
      { aggregate: 'task', id: taskId, kind: 'agent.spawn', status: 'active', since: at() },
      { aggregate: 'work', id: workId, kind: 'delivery.send', status: 'claimed', since: at() },
    ]);
    clock.advance(1000);
    await append('work', workId, { type: 'work.running', data: { workId, claimToken: 'tok' } });
    await append('work', workId, { type: 'work.heartbeat', data: { workId, claimToken: 'tok', leaseUntil: at(5) } });
    expect(await reader.get<RunningEntry>('running', `work/${workId}`)).toMatchObject({
      status: 'running',
      since: at(),
    });
    await append('task', taskId, { type: 'task.waiting', data: { taskId, reason: 'input' } });
    await append('work', workId, { type: 'work.succeeded', data: { workId, claimToken: 'tok' } });
    expect(await reader.list('running')).toEqual([]);
  });

  it('lists unknown effects and corrupt work for an operator, with the actions their machine allows', async () => {
    const { reader, clock, at, append, enqueue, claim, queueDelivery } = setup();
    const sending = await enqueue('delivery.send');
    const corrupt = await enqueue('schedule.fire');
    const deliveryId = await queueDelivery();
    await claim(sending);
    await append('work', sending, { type: 'work.sending', data: { workId: sending, claimToken: 'tok' } });
    await append(
      'delivery',
      deliveryId,
      { type: 'delivery.sending', data: { deliveryId, attempt: 1 } },
      { type: 'delivery.unknown', data: { deliveryId, reason: 'adapter timed out' } },
    );
    clock.advance(60_000);
    await append('work', sending, {
      type: 'work.lease_expired',
      data: { workId: sending, claimToken: 'tok', attempt: 1 },
    });
    await append('work', corrupt, { type: 'work.corrupt', data: { workId: corrupt, detail: 'cron spec unreadable' } });
    const entries = await reader.list<NeedsOperatorEntry>(OperatorStatusCollections.needsOperator);
    expect(entries).toEqual([
      {
        aggregate: 'delivery',
        id: deliveryId,
        kind: 'telegram',
        status: 'unknown',
        reason: 'adapter timed out',
        since: '2026-01-01T00:00:00.000Z',
        allowed: ['delivery.resolved'],
      },
      {
        aggregate: 'work',
        id: sending,
        kind: 'delivery.send',
        status: 'unknown',
        reason: 'the lease expired while sending',
        since: at(),
        allowed: ['work.resolved'],
      },
      {
        aggregate: 'work',
        id: corrupt,
        kind: 'schedule.fire',
        status: 'corrupt',
        reason: 'cron spec unreadable',
        since: at(),
        allowed: [],
      },
    ]);
    await append('work', sending, { type: 'work.resolved', data: { workId: sending, decision: 'sent' } });
    await append('delivery', deliveryId, { type: 'delivery.resolved', data: { deliveryId, decision: 'sent' } });
    expect((await reader.list<NeedsOperatorEntry>('needs-operator')).map((e) => e.id)).toEqual([corrupt]);
    expect(await reader.get<OperatorItem>('items', `work/${sending}`)).toMatchObject({
      status: 'succeeded',
      allowed: ['work.acknowledged'],
      label: 'delivery.send for subject-1',
    });
  });

  it('keeps a completion pending from ready until acknowledged, deleted or archived', async () => {
    const { reader, sessionId, at, append, submit } = setup();
    const done = await submit('summarize');
    const cancelled = await submit('search');
    await append(
      'task',
      done,
      { type: 'task.started', data: { taskId: done, worker: 'w' } },
      { type: 'task.completed', data: { taskId: done } },
      { type: 'task.completion_ready', data: { taskId: done, outcome: 'completed' } },
    );
    await append(
      'task',
      cancelled,
      { type: 'task.cancelled', data: { taskId: cancelled, reason: 'stop' } },
      { type: 'task.completion_ready', data: { taskId: cancelled, outcome: 'cancelled' } },
    );
    expect(await reader.list('pending-completions')).toEqual([
      { taskId: done, sessionId, outcome: 'completed', readyAt: at() },
      { taskId: cancelled, sessionId, outcome: 'cancelled', readyAt: at() },
    ]);
    await append('task', done, { type: 'task.completion_acknowledged', data: { taskId: done, consumer: 'parent' } });
    await append('task', cancelled, { type: 'task.deleted', data: { taskId: cancelled } });
    expect(await reader.list('pending-completions')).toEqual([]);
  });

  it('keeps the last error of any task, work item or delivery', async () => {
    const { reader, clock, at, append, enqueue, claim, submit, queueDelivery } = setup();
    const taskId = await submit('build');
    await append(
      'task',
      taskId,
      { type: 'task.started', data: { taskId, worker: 'w' } },
      { type: 'task.failed', data: { taskId, error: { code: 'exit', message: 'exit 1' }, exitCode: 1 } },
    );
    expect(await reader.get('last-error', LAST_ERROR_ID)).toEqual({
      aggregate: 'task',
      id: taskId,
      error: { code: 'exit', message: 'exit 1' },
      at: at(),
    });
    clock.advance(10);
    const workId = await enqueue('delivery.send');
    await claim(workId);
    await append('work', workId, {
      type: 'work.failed',
      data: { workId, claimToken: 'tok', error: { code: 'http', message: '503' }, retryAt: at(1000) },
    });
    expect(await reader.get('last-error', LAST_ERROR_ID)).toMatchObject({ aggregate: 'work', id: workId, at: at() });
    clock.advance(10);
    const deliveryId = await queueDelivery();
    await append(
      'delivery',
      deliveryId,
      { type: 'delivery.sending', data: { deliveryId, attempt: 1 } },
      { type: 'delivery.failed', data: { deliveryId, error: { code: 'blocked', message: 'bot blocked' } } },
    );
    expect(await reader.get('last-error', LAST_ERROR_ID)).toMatchObject({
      aggregate: 'delivery',
      error: { code: 'blocked', message: 'bot blocked' },
    });
    const corrupt = await enqueue('schedule.fire');
    await append('work', corrupt, { type: 'work.corrupt', data: { workId: corrupt, detail: 'bad payload' } });
    expect(await reader.get('last-error', LAST_ERROR_ID)).toMatchObject({
      aggregate: 'work',
      id: corrupt,
      error: { code: 'corrupt', message: 'bad payload' },
    });
    expect(await reader.get<OperatorItem>('items', `task/${taskId}`)).toMatchObject({
      status: 'failed',
      label: 'build',
      lastError: { code: 'exit', message: 'exit 1' },
      allowed: ['task.archived', 'task.completion_ready', 'task.completion_acknowledged'],
    });
    expect(await reader.get<OperatorItem>('items', `work/${workId}`)).toMatchObject({
      status: 'retry_scheduled',
      lastError: { code: 'http', message: '503' },
    });
  });

  it('ignores events the machines refuse and events for items never created', async () => {
    const { store, ids, reader, append, enqueue, submit } = setup();
    const workId = await enqueue('delivery.send');
    const taskId = await submit('t');
    const before = await reader.dump();
    const ghost = ids.next('dlv');
    await append('delivery', ghost, {
      type: 'delivery.failed',
      data: { deliveryId: ghost, error: { code: 'x', message: 'y' } },
    });
    await append('work', workId, {
      type: 'work.failed',
      data: { workId, claimToken: 't', error: { code: 'x', message: 'y' } },
    });
    await append('task', taskId, { type: 'task.completed', data: { taskId } });
    expect(await reader.dump()).toEqual(before);
    await store.rebuild();
    expect(await reader.dump()).toEqual(before);
  });

  it("follows the work item fold's claim fencing: an event naming a stale claim token changes nothing", async () => {
    const { store, reader, at, append, enqueue, claim } = setup();
    const workId = await enqueue('delivery.send');
    await claim(workId);
    await append(
      'work',
      workId,
      { type: 'work.lease_expired', data: { workId, claimToken: 'tok', attempt: 1 } },
      {
        type: 'work.claimed',
        data: { workId, claimToken: 'tok2', attempt: 2, owner: 'host-b', leaseUntil: at(60_000) },
      },
      { type: 'work.sending', data: { workId, claimToken: 'tok2' } },
    );
    const before = await reader.dump();
    expect(before.items?.[`work/${workId}`]).toMatchObject({ status: 'sending', claimToken: 'tok2' });
    await append(
      'work',
      workId,
      { type: 'work.unknown', data: { workId, claimToken: 'tok', reason: 'a late writer' } },
      { type: 'work.succeeded', data: { workId, claimToken: 'tok' } },
    );
    expect(await reader.dump()).toEqual(before);
    await store.rebuild();
    expect(await reader.dump()).toEqual(before);
    await append('work', workId, { type: 'work.succeeded', data: { workId, claimToken: 'tok2' } });
    const settled = await reader.get<OperatorItem>('items', `work/${workId}`);
    expect(settled).toMatchObject({ status: 'succeeded' });
    expect(settled?.claimToken).toBeUndefined();
  });
});
