import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWebhookAdapter, DeliveryAdapterError, type OutboundDelivery } from '../src/index.js';
import { type CountingSink, ok, refusedUrl, startCountingSink, status } from './counting-sink.js';

const delivery: OutboundDelivery = {
  deliveryId: `dlv_${'1'.repeat(26)}`,
  sessionId: `ses_${'2'.repeat(26)}`,
  messageId: `msg_${'3'.repeat(26)}`,
  text: 'The build is green.',
  idempotencyKey: `dlv_${'1'.repeat(26)}`,
};
const live = () => new AbortController().signal;

let sink: CountingSink;
beforeEach(async () => {
  sink = await startCountingSink();
});
afterEach(() => sink.close());

/** The adapter's rejection, as a DeliveryAdapterError. */
async function failure(promise: Promise<unknown>): Promise<DeliveryAdapterError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DeliveryAdapterError);
  return err as DeliveryAdapterError;
}

describe('webhook adapter', () => {
  it('POSTs the JSON body with the idempotency key and extra headers; the external ref comes from a header', async () => {
    const adapter = createWebhookAdapter({ url: sink.url, headers: { authorization: 'Bearer t0ken' } });
    sink.script(ok({ id: 'body-id' }, { 'x-external-id': 'hdr-1' }));
    expect(await adapter.send(delivery, live())).toEqual({ externalRef: 'hdr-1' });
    expect(sink.requests).toEqual([
      {
        key: delivery.deliveryId,
        headers: expect.objectContaining({ authorization: 'Bearer t0ken', 'content-type': 'application/json' }),
        body: {
          delivery_id: delivery.deliveryId,
          session_id: delivery.sessionId,
          message_id: delivery.messageId,
          text: 'The build is green.',
        },
      },
    ]);
  });

  it("takes the external ref from the body's id, and accepts a 2xx without one", async () => {
    const adapter = createWebhookAdapter({ url: sink.url });
    sink.script(ok({ id: 42 }), { status: 202, body: 'accepted' }, { status: 204 });
    expect(await adapter.send(delivery, live())).toEqual({ externalRef: '42' });
    expect(await adapter.send(delivery, live())).toEqual({});
    expect(await adapter.send(delivery, live())).toEqual({});
    expect(sink.count(delivery.deliveryId)).toBe(3);
  });

  it('maps HTTP errors: 5xx and 429 retryable (with Retry-After), other 4xx and 3xx final', async () => {
    const adapter = createWebhookAdapter({ url: sink.url });
    sink.script(
      status(503),
      status(429, { 'retry-after': '12' }),
      status(404),
      status(302, { location: 'http://127.0.0.1:1/x' }),
    );
    expect(await failure(adapter.send(delivery, live()))).toMatchObject({
      code: 'http_503',
      status: 503,
      retryable: true,
      unknownOutcome: false,
      message: expect.stringContaining('HTTP 503: status 503'),
    });
    expect(await failure(adapter.send(delivery, live()))).toMatchObject({
      code: 'http_429',
      retryable: true,
      retryAfterMs: 12_000,
    });
    expect(await failure(adapter.send(delivery, live()))).toMatchObject({ code: 'http_404', retryable: false });
    expect(await failure(adapter.send(delivery, live()))).toMatchObject({ code: 'http_302', retryable: false });
    expect(sink.count(delivery.deliveryId)).toBe(4);
  });

  it('calls a timeout after the request left an unknown outcome', async () => {
    // The sink hangs: the timeout only has to be long enough for the request to reach it on a loaded machine.
    const adapter = createWebhookAdapter({ url: sink.url, timeoutMs: 1_000 });
    sink.script('hang');
    expect(await failure(adapter.send(delivery, live()))).toMatchObject({
      code: 'timeout',
      retryable: false,
      unknownOutcome: true,
    });
    expect(sink.count(delivery.deliveryId)).toBe(1);
  });

  it('calls a connection reset after the request left an unknown outcome', async () => {
    const adapter = createWebhookAdapter({ url: sink.url });
    sink.script('reset');
    expect(await failure(adapter.send(delivery, live()))).toMatchObject({
      code: 'connection_reset',
      retryable: false,
      unknownOutcome: true,
    });
  });

  it('calls a refused connection a retryable failure: nothing was sent', async () => {
    const adapter = createWebhookAdapter({ url: await refusedUrl() });
    expect(await failure(adapter.send(delivery, live()))).toMatchObject({
      code: 'connection_refused',
      retryable: true,
      unknownOutcome: false,
    });
  });

  it("honours the caller's signal: aborted before sending is retryable, aborted in flight is unknown", async () => {
    const adapter = createWebhookAdapter({ url: sink.url });
    const before = new AbortController();
    before.abort();
    expect(await failure(adapter.send(delivery, before.signal))).toMatchObject({
      code: 'aborted',
      retryable: true,
      unknownOutcome: false,
    });
    expect(sink.requests).toHaveLength(0);

    sink.script('hang');
    const during = new AbortController();
    const sending = adapter.send(delivery, during.signal);
    await sink.received(1);
    during.abort();
    expect(await failure(sending)).toMatchObject({ code: 'aborted', retryable: false, unknownOutcome: true });
  });
});
