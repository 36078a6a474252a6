import type { DeliveryView } from '@demiurge/projector-outbox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOperatorAdapter, createWebhookAdapter, exponentialBackoff } from '../src/index.js';
import { type CountingSink, ok, refusedUrl, startCountingSink, status } from './counting-sink.js';
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
});
