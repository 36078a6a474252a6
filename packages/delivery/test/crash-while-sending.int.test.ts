import { fork } from 'node:child_process';
import { join } from 'node:path';
import { DurableWorkRuntime } from '@demiurge/control-plane';
import { expect, it } from 'vitest';
import { createWebhookAdapter, DeliveryRuntime } from '../src/index.js';
import { ok, startCountingSink } from './counting-sink.js';
import { expectConsistent, LEASE_MS, openRuntime, queueMessage, START, streamTypes } from './harness.js';

/** A dispatcher child process killed while its webhook send hangs at the sink; the store reopened. */
async function crashMidSend(seed: number) {
  const rt = await openRuntime({ seed });
  const sink = await startCountingSink('hang');
  const q = await queueMessage(rt, { text: 'sent just before the crash', channel: 'webhook' });
  await rt.store.close();

  const child = fork(
    join(import.meta.dirname, 'fixtures', 'dispatch-once.mjs'),
    [rt.path, sink.url, q.sessionId, String(START), String(LEASE_MS)],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? code)),
  );
  const messages: unknown[] = [];
  child.on('message', (m) => messages.push(m));
  await Promise.race([
    sink.received(1),
    exited.then((how) => {
      throw new Error(`the dispatcher exited (${how}) before the sink received anything`);
    }),
  ]);
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  expect(messages).toEqual([{ dispatching: true }]);
  await rt.reopen();
  return { rt, sink, q };
}

it('a host killed mid-send leaves the delivery unknown after restart: received once, never re-sent', async () => {
  const { rt, sink, q } = await crashMidSend(11);
  try {
    // Restart: the intent was recorded before the send, and no outcome after it.
    expect(await rt.delivery.get(q.deliveryId)).toMatchObject({ status: 'sending', attempts: 1 });
    expect(await rt.work.get(q.workId)).toMatchObject({ status: 'sending', owner: 'doomed-host' });
    // Before the lease runs out nothing is settled or claimed: the send might still be in flight.
    expect(await rt.work.recover()).toEqual({ rescheduled: 0, unknown: 0, corrupt: 0 });
    expect(await rt.delivery.recover()).toEqual({ unknown: 0, resolved: 0 });

    sink.setDefault(ok());
    rt.router.bind(q.sessionId, createWebhookAdapter({ url: sink.url }));
    rt.clock.advance(LEASE_MS + 1);
    expect(await rt.work.recover()).toEqual({ rescheduled: 0, unknown: 1, corrupt: 0 });
    expect(await rt.delivery.recover()).toEqual({ unknown: 1, resolved: 0 });
    expect(await rt.delivery.recover()).toEqual({ unknown: 0, resolved: 0 });
    for (let round = 0; round < 3; round++) {
      expect(await rt.delivery.dispatchDue({ limit: 10 })).toEqual([]);
      rt.clock.advance(3_600_000);
      await rt.work.recover();
      await rt.delivery.recover();
    }

    expect(await rt.delivery.get(q.deliveryId)).toMatchObject({
      status: 'unknown',
      unknownReason: expect.stringContaining('lease expired'),
      allowed: ['delivery.resolved'],
    });
    expect(await rt.work.get(q.workId)).toMatchObject({ status: 'unknown', attempts: 1 });
    expect(await streamTypes(rt.store, q.deliveryId)).toEqual([
      'delivery.queued',
      'delivery.sending',
      'delivery.unknown',
    ]);
    expect(sink.count(q.deliveryId)).toBe(1);
    expect(sink.requests).toHaveLength(1);
    await expectConsistent(rt.store);
  } finally {
    await sink.close();
    await rt.dispose();
  }
});

it('another live host settles the send of a dead host once its lease runs out (no restart): unknown, never re-sent', async () => {
  const { rt, sink, q } = await crashMidSend(12);
  try {
    sink.setDefault(ok());
    rt.router.bind(q.sessionId, createWebhookAdapter({ url: sink.url }));
    // The live host's dispatcher only: no recover() runs (that is what a restart does).
    const work = new DurableWorkRuntime({ store: rt.store, clock: rt.clock, ids: rt.ids, owner: 'live-host' });
    const live = new DeliveryRuntime({ ...rt, work, owner: 'live-host', expireSendsEveryMs: 0 });
    expect(await live.dispatchDue({ limit: 10 })).toEqual([]);
    expect(await rt.work.get(q.workId)).toMatchObject({ status: 'sending' }); // the lease is live: hands off
    rt.clock.advance(LEASE_MS + 1);
    expect(await live.dispatchDue({ limit: 10 })).toEqual([]);
    expect(await rt.work.get(q.workId)).toMatchObject({ status: 'unknown', attempts: 1 });
    expect(await streamTypes(rt.store, q.deliveryId)).toEqual([
      'delivery.queued',
      'delivery.sending',
      'delivery.unknown',
    ]);
    rt.clock.advance(3_600_000);
    expect(await live.dispatchDue({ limit: 10 })).toEqual([]);
    expect(sink.count(q.deliveryId)).toBe(1);
    await expectConsistent(rt.store);
  } finally {
    await sink.close();
    await rt.dispose();
  }
});
