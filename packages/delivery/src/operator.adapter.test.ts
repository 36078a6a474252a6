import { describe, expect, it } from 'vitest';
import type { OutboundDelivery } from './delivery-adapter.js';
import { DeliveryAdapterError } from './errors.js';
import { createOperatorAdapter } from './operator.adapter.js';

const delivery: OutboundDelivery = {
  deliveryId: `dlv_${'1'.repeat(26)}`,
  sessionId: `ses_${'2'.repeat(26)}`,
  messageId: `msg_${'3'.repeat(26)}`,
  text: 'hello',
  idempotencyKey: `dlv_${'1'.repeat(26)}`,
};
const live = () => new AbortController().signal;

describe('operator adapter', () => {
  it('hands deliveries to the attached sink, and has no route without one', async () => {
    const operator = createOperatorAdapter();
    expect(operator.channel).toBe('operator');
    await expect(operator.send(delivery, live())).rejects.toMatchObject({
      name: 'DeliveryAdapterError',
      code: 'no_route',
      retryable: true,
      unknownOutcome: false,
    });
    const pushed: OutboundDelivery[] = [];
    const detach = operator.attach((d) => {
      pushed.push(d);
      return { externalRef: 'frame-1' };
    });
    expect(operator.isLive()).toBe(true);
    expect(await operator.send(delivery, live())).toEqual({ externalRef: 'frame-1' });
    expect(pushed).toEqual([delivery]);
    detach();
    expect(operator.isLive()).toBe(false);
  });

  it('keeps a newer sink when an older one detaches', async () => {
    const operator = createOperatorAdapter({ channel: 'tui' });
    const detachOld = operator.attach(() => ({ externalRef: 'old' }));
    operator.attach(() => ({ externalRef: 'new' }));
    detachOld();
    expect(await operator.send(delivery, live())).toEqual({ externalRef: 'new' });
  });

  it("passes a sink's typed error through and records anything else as a final adapter_error", async () => {
    const operator = createOperatorAdapter();
    const typed = new DeliveryAdapterError({
      code: 'client_busy',
      channel: 'operator',
      detail: 'busy',
      retryable: true,
      unknownOutcome: false,
    });
    operator.attach(() => {
      throw typed;
    });
    await expect(operator.send(delivery, live())).rejects.toBe(typed);
    operator.attach(async () => {
      throw new RangeError('socket closed');
    });
    await expect(operator.send(delivery, live())).rejects.toMatchObject({
      code: 'adapter_error',
      retryable: false,
      unknownOutcome: false,
      message: 'operator delivery: the operator sink raised: socket closed',
    });
  });
});
