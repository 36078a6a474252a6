import { fork } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { createWebhookAdapter } from '../src/index.js';
import { ok, startCountingSink } from './counting-sink.js';
import { expectConsistent, LEASE_MS, openRuntime, queueMessage, START, streamTypes } from './harness.js';

it('a host killed mid-send leaves the delivery unknown after restart: received once, never re-sent', async () => {
  const rt = await openRuntime({ seed: 11 });
  const sink = await startCountingSink('hang');
  try {
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

    // Restart: the intent was recorded before the send, and no outcome after it.
    await rt.reopen();
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
