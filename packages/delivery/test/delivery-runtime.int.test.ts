import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  BackgroundDispatcher,
  createOperatorAdapter,
  createWebhookAdapter,
  type DeliveryAdapter,
} from '../src/index.js';
import { type CountingSink, startCountingSink, status } from './counting-sink.js';
import { expectConsistent, LEASE_MS, messages, openRuntime, queueMessage, type Runtime } from './harness.js';

let rt: Runtime;
let sink: CountingSink;

beforeEach(async () => {
  rt = await openRuntime();
  sink = await startCountingSink();
});

afterEach(async () => {
  await sink.close();
  await rt.dispose();
});

const webhook = (timeoutMs = 2_000, url = sink.url) => createWebhookAdapter({ url, timeoutMs });

describe('DeliveryRuntime', () => {
  it('records an adapter that raises an untyped error as a final failure, never re-sent', async () => {
    const q = await queueMessage(rt, { text: 'buggy adapter', channel: 'custom' });
    let calls = 0;
    const buggy: DeliveryAdapter = {
      channel: 'custom',
      send: async () => {
        calls++;
        throw new TypeError('cannot read properties of undefined');
      },
    };
    rt.router.bind(q.sessionId, buggy);
    expect((await rt.delivery.dispatchDue({ limit: 1 }))[0]).toMatchObject({
      status: 'failed',
      retryAt: null,
      error: { code: 'adapter_error', message: expect.stringContaining('TypeError') },
    });
    rt.clock.advance(3_600_000);
    expect(await rt.delivery.dispatchDue({ limit: 1 })).toEqual([]);
    expect(calls).toBe(1);
    await expectConsistent(rt.store);
  });

  it('fails a work item whose delivery was never queued, and a delivery whose message is missing', async () => {
    const ghost = rt.ids.next('dlv');
    const { workId } = await rt.work.enqueue({
      kind: 'delivery.send',
      subjectId: ghost,
      payload: { deliveryId: ghost },
    });
    const sessionId = (await queueMessage(rt, { text: 'x', channel: 'webhook' })).sessionId;
    const missing = await rt.host.enqueueDelivery({ sessionId, messageId: rt.ids.next('msg'), channel: 'webhook' });
    rt.router.bind(sessionId, webhook());
    const outcomes = await rt.delivery.dispatchDue({ limit: 10 });
    expect(outcomes.find((o) => o.workId === workId)).toMatchObject({
      status: 'failed',
      retryAt: null,
      error: { code: 'delivery_not_found' },
    });
    expect(outcomes.find((o) => o.deliveryId === missing.deliveryId)).toMatchObject({
      status: 'failed',
      retryAt: null,
      error: { code: 'message_not_found' },
    });
    expect(sink.count(missing.deliveryId)).toBe(0);
    await expectConsistent(rt.store);
  });

  it('dispatches many deliveries across sessions concurrently, each sent exactly once', async () => {
    const queued = [];
    for (let i = 0; i < 12; i++) {
      const q = await queueMessage(rt, { text: `message ${i}`, channel: 'webhook' });
      rt.router.bind(q.sessionId, webhook());
      queued.push(q);
    }
    const outcomes = [
      ...(await rt.delivery.dispatchDue({ limit: 5 })),
      ...(await rt.delivery.dispatchDue({ limit: 50 })),
    ];
    expect(outcomes.map((o) => o.status)).toEqual(Array(12).fill('sent'));
    for (const q of queued) expect(sink.count(q.deliveryId)).toBe(1);
    expect(new Set(sink.requests.map((r) => (r.body as { text: string }).text)).size).toBe(12);
    await expectConsistent(rt.store);
  });

  it('fences a send that outlived its lease: recovery called it unknown, the late success is not recorded', async () => {
    const q = await queueMessage(rt, { text: 'slow sink', channel: 'operator' });
    const operator = createOperatorAdapter();
    operator.attach(async () => {
      // Meanwhile another host's recovery finds the send lease expired.
      rt.clock.advance(LEASE_MS + 1);
      expect(await rt.work.recover()).toMatchObject({ unknown: 1 });
      return { externalRef: 'too-late' };
    });
    rt.router.bind(q.sessionId, operator);
    const [outcome] = await rt.delivery.dispatchDue({ limit: 1 });
    expect(outcome).toMatchObject({
      status: 'stale',
      externalRef: 'too-late',
      error: { code: 'stale_claim', message: expect.stringContaining('the sent outcome was not recorded') },
    });
    expect(await rt.delivery.get(q.deliveryId)).toMatchObject({ status: 'unknown' });
    expect(await rt.work.get(q.workId)).toMatchObject({ status: 'unknown', externalRef: null });
    await expectConsistent(rt.store);
  });

  it('stops waiting for an adapter that ignores its signal once the dispatch is aborted: unknown', async () => {
    const q = await queueMessage(rt, { text: 'stuck adapter', channel: 'stuck' });
    let called!: () => void;
    const calledPromise = new Promise<void>((resolve) => {
      called = resolve;
    });
    rt.router.bind(q.sessionId, {
      channel: 'stuck',
      send: () => {
        called();
        return new Promise(() => {});
      },
    });
    const shutdown = new AbortController();
    const dispatching = rt.delivery.dispatchDue({ limit: 1, signal: shutdown.signal });
    await calledPromise;
    shutdown.abort();
    expect((await dispatching)[0]).toMatchObject({ status: 'unknown', error: { code: 'aborted' } });
    await expectConsistent(rt.store);
  });

  it('a background dispatcher delivers on wake and drains the send in flight on close', async () => {
    const q = await queueMessage(rt, { text: 'background', channel: 'operator' });
    const operator = createOperatorAdapter();
    let reached!: () => void;
    const inSink = new Promise<void>((resolve) => {
      reached = resolve;
    });
    operator.attach(async () => {
      reached();
      await new Promise((r) => setTimeout(r, 100));
      return { externalRef: 'drained' };
    });
    rt.router.bind(q.sessionId, operator);
    const errors: unknown[] = [];
    const dispatcher = new BackgroundDispatcher({
      runtime: rt.delivery,
      intervalMs: 60_000,
      onError: (e) => errors.push(e),
    }).start();
    await inSink;
    await dispatcher.close();
    expect(await rt.delivery.get(q.deliveryId)).toMatchObject({ status: 'sent', externalId: 'drained' });
    expect(errors).toEqual([]);
    await expectConsistent(rt.store);
  });

  it('records no failure note in an archived session (it takes no messages), and still fails the delivery', async () => {
    const q = await queueMessage(rt, { text: 'too late to tell', channel: 'webhook' });
    await rt.store.append({
      streamType: 'session',
      streamId: q.sessionId,
      expectedVersion: 'any',
      events: [{ type: 'session.archived', data: { sessionId: q.sessionId, reason: 'done' } }],
    });
    rt.router.bind(q.sessionId, webhook());
    sink.setDefault(status(410));
    expect((await rt.delivery.dispatchDue({ limit: 1 }))[0]).toMatchObject({ status: 'failed', retryAt: null });
    expect(await messages(rt.store, q.sessionId)).toHaveLength(1);
    await expectConsistent(rt.store);
  });
});
