import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createOperatorAdapter,
  createWebhookAdapter,
  DeliveryAdapterError,
  exponentialBackoff,
  type OutboundDelivery,
} from '../src/index.js';
import { type CountingSink, ok, startCountingSink } from './counting-sink.js';
import { expectConsistent, messages, openRuntime, queueMessage, type Runtime, START, streamTypes } from './harness.js';

const at = (ms: number) => new Date(START + ms).toISOString();

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
  it('is unrouted without a live route, and sent once a route is bound and the retry is due', async () => {
    const q = await queueMessage(rt, { text: 'waiting for a route', channel: 'webhook' });

    const [first] = await rt.delivery.dispatchDue({ limit: 10 });
    expect(first).toMatchObject({
      status: 'unrouted',
      retryAt: at(5_000),
      error: { code: 'no_route', message: `no webhook route is bound for session ${q.sessionId}` },
    });
    expect(await rt.delivery.get(q.deliveryId)).toMatchObject({
      status: 'unrouted',
      attempts: 0,
      unroutedReason: `no webhook route is bound for session ${q.sessionId}`,
    });
    // Another channel's route does not count.
    rt.router.bind(q.sessionId, createOperatorAdapter());
    rt.clock.advance(5_000);
    expect((await rt.delivery.dispatchDue({ limit: 10 }))[0]).toMatchObject({
      status: 'unrouted',
      retryAt: at(15_000),
    });
    expect(await streamTypes(rt.store, q.deliveryId)).toEqual(['delivery.queued', 'delivery.unrouted']);

    rt.router.bind(q.sessionId, webhook());
    rt.clock.advance(10_000);
    expect((await rt.delivery.dispatchDue({ limit: 10 }))[0]).toMatchObject({ status: 'sent', attempt: 3 });
    expect(sink.count(q.deliveryId)).toBe(1);
    expect(await streamTypes(rt.store, q.deliveryId)).toEqual([
      'delivery.queued',
      'delivery.unrouted',
      'delivery.sending',
      'delivery.sent',
    ]);
    await expectConsistent(rt.store);
  });

  it('treats an operator adapter with no sink as unrouted, also when the sink leaves mid-dispatch', async () => {
    const operator = createOperatorAdapter();
    const q = await queueMessage(rt, { text: 'for the operator', channel: 'operator' });
    rt.router.bind(q.sessionId, operator);
    expect((await rt.delivery.dispatchDue({ limit: 1 }))[0]).toMatchObject({
      status: 'unrouted',
      error: { message: `the operator route of session ${q.sessionId} is not live` },
    });

    // A sink that is attached when routed but detaches before the send: sending → unrouted.
    const detach = operator.attach(() => {
      throw new DeliveryAdapterError({
        code: 'no_route',
        channel: 'operator',
        detail: 'the client went away',
        retryable: true,
        unknownOutcome: false,
      });
    });
    rt.clock.advance(5_000);
    expect((await rt.delivery.dispatchDue({ limit: 1 }))[0]).toMatchObject({ status: 'unrouted', retryAt: at(15_000) });
    detach();

    const delivered: OutboundDelivery[] = [];
    operator.attach((delivery) => {
      delivered.push(delivery);
      return undefined;
    });
    rt.clock.advance(10_000);
    expect((await rt.delivery.dispatchDue({ limit: 1 }))[0]).toMatchObject({ status: 'sent', externalRef: null });
    expect(delivered.map((d) => d.text)).toEqual(['for the operator']);
    expect(await streamTypes(rt.store, q.deliveryId)).toEqual([
      'delivery.queued',
      'delivery.unrouted',
      'delivery.sending',
      'delivery.unrouted',
      'delivery.sending',
      'delivery.sent',
    ]);
    await expectConsistent(rt.store);
  });

  it('gives up on an unrouted delivery after its attempts, with a failure note', async () => {
    const tight = await openRuntime({
      seed: 9,
      unroutedRetry: exponentialBackoff({ initialMs: 1_000, maxAttempts: 2 }),
    });
    try {
      const q = await queueMessage(tight, { text: 'nobody home', channel: 'webhook' });
      expect((await tight.delivery.dispatchDue({ limit: 1 }))[0]).toMatchObject({
        status: 'unrouted',
        retryAt: at(1_000),
      });
      tight.clock.advance(1_000);
      expect((await tight.delivery.dispatchDue({ limit: 1 }))[0]).toMatchObject({ status: 'unrouted', retryAt: null });
      expect(await tight.delivery.get(q.deliveryId)).toMatchObject({ status: 'unrouted' });
      expect(await tight.work.get(q.workId)).toMatchObject({ status: 'failed', lastError: { code: 'no_route' } });
      const recorded = await messages(tight.store, q.sessionId);
      expect(recorded.map((e) => e.data)).toEqual([
        expect.objectContaining({ messageId: q.messageId, text: 'nobody home' }),
        expect.objectContaining({
          role: 'system',
          visibility: 'model_hidden',
          text: expect.stringContaining('was not delivered after 2 attempts'),
        }),
      ]);
      await expectConsistent(tight.store);
    } finally {
      await tight.dispose();
    }
  });

  it('marks a timed-out send unknown and never sends it again, through dispatch rounds and recovery', async () => {
    const q = await queueMessage(rt, { text: 'maybe delivered', channel: 'webhook' });
    rt.router.bind(q.sessionId, webhook(150));
    sink.script('hang');

    const [outcome] = await rt.delivery.dispatchDue({ limit: 10 });
    expect(outcome).toMatchObject({ status: 'unknown', retryAt: null, error: { code: 'timeout' } });
    expect(await rt.delivery.get(q.deliveryId)).toMatchObject({
      status: 'unknown',
      unknownReason: expect.stringContaining('within 150 ms'),
    });
    expect(await rt.work.get(q.workId)).toMatchObject({ status: 'unknown' });

    for (let round = 0; round < 4; round++) {
      rt.clock.advance(3_600_000);
      expect(await rt.work.recover()).toEqual({ rescheduled: 0, unknown: 0, corrupt: 0 });
      expect(await rt.delivery.recover()).toEqual({ unknown: 0, resolved: 0 });
      expect(await rt.delivery.dispatchDue({ limit: 10 })).toEqual([]);
    }
    await rt.reopen();
    rt.router.bind(q.sessionId, webhook());
    expect(await rt.delivery.dispatchDue({ limit: 10 })).toEqual([]);
    expect(sink.count(q.deliveryId)).toBe(1);
    expect((await rt.work.get(q.workId)).attempts).toBe(1);
    const needsOperator = (await rt.host.status()).needsOperator;
    expect(needsOperator.map((e) => `${e.aggregate}/${e.id}`).sort()).toEqual([
      `delivery/${q.deliveryId}`,
      `work/${q.workId}`,
    ]);
    await expectConsistent(rt.store);
  });

  it('marks a connection reset after the request was sent unknown', async () => {
    const q = await queueMessage(rt, { text: 'reset me', channel: 'webhook' });
    rt.router.bind(q.sessionId, webhook());
    sink.script('reset');
    const [outcome] = await rt.delivery.dispatchDue({ limit: 1 });
    expect(outcome).toMatchObject({ status: 'unknown', error: { code: 'connection_reset' } });
    expect(sink.count(q.deliveryId)).toBe(1);
    await expectConsistent(rt.store);
  });

  it('lets only an operator settle an unknown delivery: retry sends it again, sent closes it', async () => {
    const a = await queueMessage(rt, { text: 'first', channel: 'webhook' });
    const b = await queueMessage(rt, { text: 'second', channel: 'webhook' });
    rt.router.bind(a.sessionId, webhook(150));
    rt.router.bind(b.sessionId, webhook(150));
    sink.script('hang', 'hang');
    expect((await rt.delivery.dispatchDue({ limit: 10 })).map((o) => o.status)).toEqual(['unknown', 'unknown']);

    // Through the delivery runtime: both streams in one commit; repeating it appends nothing.
    await rt.delivery.resolveUnknown(a.deliveryId, 'retry', { note: 'not in the receiver log', operator: 'alice' });
    const head = await rt.store.head();
    await rt.delivery.resolveUnknown(a.deliveryId, 'retry', { note: 'not in the receiver log', operator: 'alice' });
    expect(await rt.store.head()).toBe(head);
    expect(await rt.delivery.get(a.deliveryId)).toMatchObject({
      status: 'queued',
      resolution: { decision: 'retry', note: 'not in the receiver log' },
    });
    expect((await rt.store.readStream(a.deliveryId)).at(-1)!.meta.actor).toEqual({ kind: 'operator', id: 'alice' });

    // Through DurableWorkRuntime directly: the delivery runtime's recover mirrors the decision.
    await rt.work.resolveUnknown(b.workId, 'sent', { note: 'the receiver has it' });
    expect(await rt.delivery.get(b.deliveryId)).toMatchObject({ status: 'unknown' });
    expect(await rt.delivery.recover()).toEqual({ unknown: 0, resolved: 1 });
    expect(await rt.delivery.get(b.deliveryId)).toMatchObject({ status: 'sent', resolution: { decision: 'sent' } });

    sink.setDefault(ok());
    const outcomes = await rt.delivery.dispatchDue({ limit: 10 });
    expect(outcomes).toMatchObject([{ deliveryId: a.deliveryId, status: 'sent', attempt: 2 }]);
    expect(sink.count(a.deliveryId)).toBe(2);
    expect(sink.count(b.deliveryId)).toBe(1);
    await expectConsistent(rt.store);
  });

  it('mirrors an operator retry made on the work item when the delivery is dispatched', async () => {
    const q = await queueMessage(rt, { text: 'again please', channel: 'webhook' });
    rt.router.bind(q.sessionId, webhook(150));
    sink.script('hang');
    await rt.delivery.dispatchDue({ limit: 1 });
    await rt.work.resolveUnknown(q.workId, 'retry');
    const [outcome] = await rt.delivery.dispatchDue({ limit: 1 });
    expect(outcome).toMatchObject({ status: 'sent', attempt: 2 });
    expect(await streamTypes(rt.store, q.deliveryId)).toEqual([
      'delivery.queued',
      'delivery.sending',
      'delivery.unknown',
      'delivery.resolved',
      'delivery.sending',
      'delivery.sent',
    ]);
    await expectConsistent(rt.store);
  });
});
