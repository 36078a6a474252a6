import type { DeliveryView } from '@demiurge/projector-outbox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  BackgroundDispatcher,
  createOperatorAdapter,
  createWebhookAdapter,
  type DeliveryAdapter,
  DeliveryAdapterError,
  exponentialBackoff,
  type OutboundDelivery,
} from '../src/index.js';
import { type CountingSink, ok, refusedUrl, startCountingSink, status } from './counting-sink.js';
import {
  expectConsistent,
  LEASE_MS,
  messages,
  openRuntime,
  queueMessage,
  type Runtime,
  START,
  streamTypes,
} from './harness.js';

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
  it('sends a queued message once: intent recorded first, then sent with the external ref', async () => {
    const q = await queueMessage(rt, { text: 'Build finished: 3 tests fixed.', channel: 'webhook' });
    rt.router.bind(q.sessionId, webhook());
    sink.script(ok({ id: 'ext-77' }));

    const outcomes = await rt.delivery.dispatchDue({ limit: 10 });

    expect(outcomes).toEqual([
      {
        deliveryId: q.deliveryId,
        workId: q.workId,
        attempt: 1,
        status: 'sent',
        retryAt: null,
        error: null,
        externalRef: 'ext-77',
      },
    ]);
    expect(sink.requests).toEqual([
      {
        key: q.deliveryId,
        headers: expect.objectContaining({ 'idempotency-key': q.deliveryId, 'content-type': 'application/json' }),
        body: {
          delivery_id: q.deliveryId,
          session_id: q.sessionId,
          message_id: q.messageId,
          text: 'Build finished: 3 tests fixed.',
        },
      },
    ]);
    expect(await rt.delivery.get(q.deliveryId)).toMatchObject({ status: 'sent', attempts: 1, externalId: 'ext-77' });
    expect(await rt.work.get(q.workId)).toMatchObject({ status: 'succeeded', externalRef: 'ext-77' });
    expect(await streamTypes(rt.store, q.deliveryId)).toEqual(['delivery.queued', 'delivery.sending', 'delivery.sent']);
    // delivery.sending and work.sending are one commit (adjacent positions), before the send's outcome.
    const log = await rt.store.readAll({ types: ['delivery.sending', 'work.sending', 'delivery.sent'] });
    expect(
      log
        .map((e) => e.type)
        .slice(0, 2)
        .sort(),
    ).toEqual(['delivery.sending', 'work.sending']);
    expect(log[1]!.position).toBe(log[0]!.position + 1);
    expect(log[2]!.type).toBe('delivery.sent');
    // Nothing is due any more.
    rt.clock.advance(3_600_000);
    expect(await rt.delivery.dispatchDue({ limit: 10 })).toEqual([]);
    expect(sink.count(q.deliveryId)).toBe(1);
    await expectConsistent(rt.store);
  });

  it('records sending before the adapter is called (the adapter sees sending in the store)', async () => {
    const q = await queueMessage(rt, { text: 'hello operator', channel: 'operator' });
    const operator = createOperatorAdapter();
    const seen: unknown[] = [];
    operator.attach(async (delivery) => {
      seen.push({
        delivery,
        status: (await rt.delivery.get(delivery.deliveryId)).status,
        work: (await rt.work.get(q.workId)).status,
      });
      return { externalRef: 'client-1' };
    });
    rt.router.bind(q.sessionId, operator);

    const [outcome] = await rt.delivery.dispatchDue({ limit: 1 });

    expect(outcome).toMatchObject({ status: 'sent', externalRef: 'client-1' });
    expect(seen).toEqual([
      {
        delivery: {
          deliveryId: q.deliveryId,
          sessionId: q.sessionId,
          messageId: q.messageId,
          text: 'hello operator',
          idempotencyKey: q.deliveryId,
        },
        status: 'sending',
        work: 'sending',
      },
    ]);
    await expectConsistent(rt.store);
  });

  it('retries a 500 after its backoff with the same body and key, and never rewrites the message', async () => {
    const q = await queueMessage(rt, { text: 'Original body, exactly.', channel: 'webhook' });
    rt.router.bind(q.sessionId, webhook());
    sink.script(status(500), ok());

    const [first] = await rt.delivery.dispatchDue({ limit: 10 });
    expect(first).toMatchObject({
      status: 'failed',
      attempt: 1,
      retryAt: at(1_000),
      error: { code: 'http_500', message: expect.stringContaining('HTTP 500') },
    });
    expect(await rt.delivery.get(q.deliveryId)).toMatchObject({ status: 'failed', lastError: { code: 'http_500' } });
    expect(await rt.work.get(q.workId)).toMatchObject({ status: 'retry_scheduled', nextAttemptAt: at(1_000) });

    // Not due yet: nothing is claimed or sent.
    rt.clock.advance(999);
    expect(await rt.delivery.dispatchDue({ limit: 10 })).toEqual([]);
    rt.clock.advance(1);
    const [second] = await rt.delivery.dispatchDue({ limit: 10 });
    expect(second).toMatchObject({ status: 'sent', attempt: 2 });

    expect(sink.count(q.deliveryId)).toBe(2);
    expect(sink.requests.map((r) => r.body)).toEqual([sink.requests[0]!.body, sink.requests[0]!.body]);
    expect((sink.requests[0]!.body as { text: string }).text).toBe('Original body, exactly.');
    expect(await rt.delivery.get(q.deliveryId)).toMatchObject<Partial<DeliveryView>>({
      status: 'sent',
      attempts: 2,
      lastError: { code: 'http_500', message: expect.any(String) },
    });
    // The session holds the original message, unchanged, and nothing else (a retry writes no history).
    const recorded = await messages(rt.store, q.sessionId);
    expect(recorded.map((e) => e.data)).toEqual([
      {
        messageId: q.messageId,
        sessionId: q.sessionId,
        role: 'assistant',
        text: 'Original body, exactly.',
        visibility: 'persist',
      },
    ]);
    await expectConsistent(rt.store);
  });

  it('fails a 400 for good: no retry, and a model-hidden failure note beside the untouched original', async () => {
    const q = await queueMessage(rt, { text: 'Deploy report', channel: 'webhook' });
    rt.router.bind(q.sessionId, webhook());
    sink.setDefault(status(400));

    const [outcome] = await rt.delivery.dispatchDue({ limit: 10 });
    expect(outcome).toMatchObject({ status: 'failed', retryAt: null, error: { code: 'http_400' } });
    expect(await rt.work.get(q.workId)).toMatchObject({ status: 'failed', nextAttemptAt: null });

    rt.clock.advance(86_400_000);
    expect(await rt.delivery.dispatchDue({ limit: 10 })).toEqual([]);
    await rt.work.recover();
    expect(await rt.delivery.recover()).toEqual({ unknown: 0, resolved: 0 });
    expect(sink.count(q.deliveryId)).toBe(1);

    const recorded = await messages(rt.store, q.sessionId);
    expect(recorded).toHaveLength(2);
    expect(recorded[0]!.data).toMatchObject({ messageId: q.messageId, text: 'Deploy report', visibility: 'persist' });
    expect(recorded[1]!.data).toMatchObject({ role: 'system', visibility: 'model_hidden' });
    const note = (recorded[1]!.data as { text: string; messageId: string }).text;
    expect(note).toContain(q.deliveryId);
    expect(note).toContain(q.messageId);
    expect(note).toContain('HTTP 400');
    await expectConsistent(rt.store);
  });

  it('honours Retry-After on a 429, and retries a refused connection (nothing was sent)', async () => {
    const q = await queueMessage(rt, { text: 'rate limited', channel: 'webhook' });
    rt.router.bind(q.sessionId, webhook());
    sink.script(status(429, { 'retry-after': '7' }));
    const [limited] = await rt.delivery.dispatchDue({ limit: 1 });
    expect(limited).toMatchObject({ status: 'failed', retryAt: at(7_000), error: { code: 'http_429' } });

    const r = await queueMessage(rt, { text: 'nobody listens', channel: 'webhook' });
    rt.router.bind(r.sessionId, createWebhookAdapter({ url: await refusedUrl(), timeoutMs: 2_000 }));
    const [refused] = await rt.delivery.dispatchDue({ limit: 1 });
    expect(refused).toMatchObject({
      deliveryId: r.deliveryId,
      status: 'failed',
      retryAt: at(1_000),
      error: { code: 'connection_refused' },
    });
    await expectConsistent(rt.store);
  });

  it('gives up on a retryable failure when the retry policy runs out', async () => {
    const tight = await openRuntime({ seed: 5, retry: exponentialBackoff({ initialMs: 100, maxAttempts: 2 }) });
    try {
      const q = await queueMessage(tight, { text: 'flaky', channel: 'webhook' });
      tight.router.bind(q.sessionId, webhook());
      sink.setDefault(status(503));
      expect((await tight.delivery.dispatchDue({ limit: 1 }))[0]).toMatchObject({ status: 'failed', retryAt: at(100) });
      tight.clock.advance(100);
      expect((await tight.delivery.dispatchDue({ limit: 1 }))[0]).toMatchObject({ status: 'failed', retryAt: null });
      tight.clock.advance(600_000);
      expect(await tight.delivery.dispatchDue({ limit: 1 })).toEqual([]);
      expect(sink.count(q.deliveryId)).toBe(2);
      expect((await messages(tight.store, q.sessionId)).map((e) => (e.data as { role: string }).role)).toEqual([
        'assistant',
        'system',
      ]);
      await expectConsistent(tight.store);
    } finally {
      await tight.dispose();
    }
  });

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
