import type { NewEvent } from '@demiurge/contracts';
import { describe, expect, it } from 'vitest';
import { IllegalTransitionError } from '../errors.js';
import { recordGiven } from '../testing/index.js';
import { type DeliveryFacts, deliveryFold, evolveDelivery, initialDeliveryFacts } from './delivery.fold.js';

const deliveryId = 'dlv_01JD5Y7Q6N0000000000000000';
const sessionId = 'ses_01JD5Y7Q6N0000000000000000';
const messageId = 'msg_01JD5Y7Q6N0000000000000000';
const workId = 'wrk_01JD5Y7Q6N0000000000000000';
const AT = '2026-01-01T00:00:00.000Z';
const e = (type: string, data: Record<string, unknown> = {}): NewEvent => ({ type, data: { deliveryId, ...data } });
const queued = (more: Record<string, unknown> = {}) =>
  e('delivery.queued', { sessionId, messageId, workId, channel: 'cli', ...more });
const sending = (attempt: number) => e('delivery.sending', { attempt });

/** given (events) → then (the delivery), through the strict fold and the tolerant one alike. */
function given(...events: NewEvent[]): DeliveryFacts {
  const recorded = recordGiven(events, 'delivery', deliveryId);
  const strict = recorded.reduce((s, ev) => deliveryFold.evolve(s, ev, deliveryId), initialDeliveryFacts);
  const tolerant = recorded.reduce<DeliveryFacts>((s, ev) => evolveDelivery(s, ev) ?? s, initialDeliveryFacts);
  expect(tolerant).toEqual(strict);
  return strict;
}

describe('the delivery fold', () => {
  it('follows a delivery: its intent, the sends started, the last error, the channel id', () => {
    expect(
      given(
        queued({ conversationKey: 'c1' }),
        sending(1),
        e('delivery.failed', { error: { code: 'http_503', message: 'busy' } }),
        sending(2),
        e('delivery.sent', { externalId: 'ext-1' }),
      ),
    ).toEqual({
      status: 'sent',
      queued: { deliveryId, sessionId, messageId, workId, channel: 'cli', conversationKey: 'c1', at: AT },
      attempts: 2,
      lastError: { code: 'http_503', message: 'busy' },
      externalId: 'ext-1',
      unroutedReason: null,
      unknownReason: null,
      resolution: null,
    });
    expect(given(queued()).queued?.conversationKey).toBeNull();
  });

  it('keeps the unrouted and unknown reasons only while they hold', () => {
    expect(given(queued(), e('delivery.unrouted', { reason: 'no route' }))).toMatchObject({
      status: 'unrouted',
      unroutedReason: 'no route',
    });
    expect(given(queued(), e('delivery.unrouted', { reason: 'no route' }), sending(1))).toMatchObject({
      status: 'sending',
      unroutedReason: null,
      attempts: 1,
    });
    const unknown = given(queued(), sending(1), e('delivery.unknown', { reason: 'lease expired' }));
    expect(unknown).toMatchObject({ status: 'unknown', unknownReason: 'lease expired' });
    const retried = given(
      queued(),
      sending(1),
      e('delivery.unknown', { reason: 'lease expired' }),
      e('delivery.resolved', { decision: 'retry', note: 'customer asked' }),
    );
    expect(retried).toMatchObject({
      status: 'queued',
      unknownReason: null,
      resolution: { decision: 'retry', note: 'customer asked', at: AT },
    });
  });

  it('refuses what the machine refuses: strict throws naming the delivery, tolerant skips', () => {
    const [q, s1, s2] = recordGiven([queued(), sending(1), sending(2)], 'delivery', deliveryId);
    const state = deliveryFold.evolve(deliveryFold.evolve(initialDeliveryFacts, q!, deliveryId), s1!, deliveryId);
    expect(() => deliveryFold.evolve(state, s2!, deliveryId)).toThrow(IllegalTransitionError);
    expect(() => deliveryFold.evolve(state, s2!, deliveryId)).toThrow(`delivery ${deliveryId} is sending`);
    expect(evolveDelivery(state, s2!)).toBeUndefined();
    // A delivery never queued: nothing of it exists.
    expect(evolveDelivery(initialDeliveryFacts, s1!)).toBeUndefined();
  });
});
