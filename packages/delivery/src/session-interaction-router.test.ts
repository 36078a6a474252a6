import { describe, expect, it } from 'vitest';
import type { DeliveryAdapter, OutboundDelivery } from './delivery-adapter.js';
import { RouteSessionMismatchError } from './errors.js';
import { createOperatorAdapter } from './operator.adapter.js';
import { SessionInteractionRouter } from './session-interaction-router.js';

const SES_A = `ses_${'A'.repeat(26)}`;
const SES_B = `ses_${'B'.repeat(26)}`;

function recorder(channel: string) {
  const sent: OutboundDelivery[] = [];
  const adapter: DeliveryAdapter = {
    channel,
    send: async (delivery) => {
      sent.push(delivery);
      return { externalRef: `${channel}-${sent.length}` };
    },
  };
  return { adapter, sent };
}

const delivery = (sessionId: string): OutboundDelivery => ({
  deliveryId: `dlv_${'1'.repeat(26)}`,
  sessionId,
  messageId: `msg_${'2'.repeat(26)}`,
  text: 'hi',
  idempotencyKey: `dlv_${'1'.repeat(26)}`,
});

describe('SessionInteractionRouter', () => {
  it('binds routes per session and channel, and unbinds only its own binding', async () => {
    const router = new SessionInteractionRouter();
    const webhook = recorder('webhook');
    const operator = recorder('operator');
    const unbindWebhook = router.bind(SES_A, webhook.adapter);
    router.bind(SES_A, operator.adapter);
    expect(router.channels(SES_A)).toEqual(['webhook', 'operator']);
    expect(router.route(SES_B, 'webhook')).toBeUndefined();
    expect(router.route(SES_A, 'telegram')).toBeUndefined();

    const route = router.route(SES_A, 'webhook')!;
    expect(route).toMatchObject({ sessionId: SES_A, channel: 'webhook' });
    expect(route.isLive()).toBe(true);
    expect(await route.send(delivery(SES_A), new AbortController().signal)).toEqual({ externalRef: 'webhook-1' });
    expect(operator.sent).toEqual([]);

    // A later binding of the same channel replaces it; the first unbind then leaves the replacement alone.
    const replacement = recorder('webhook');
    const unbindReplacement = router.bind(SES_A, replacement.adapter);
    unbindWebhook();
    await router.route(SES_A, 'webhook')!.send(delivery(SES_A), new AbortController().signal);
    expect(replacement.sent).toHaveLength(1);
    unbindReplacement();
    expect(router.route(SES_A, 'webhook')).toBeUndefined();
    expect(router.channels(SES_A)).toEqual(['operator']);
  });

  it("refuses another session's message, naming both sessions, and sends nothing", async () => {
    const router = new SessionInteractionRouter();
    const webhook = recorder('webhook');
    router.bind(SES_A, webhook.adapter);
    const refused = router.route(SES_A, 'webhook')!.send(delivery(SES_B), new AbortController().signal);
    await expect(refused).rejects.toThrow(RouteSessionMismatchError);
    await expect(refused).rejects.toMatchObject({
      name: 'RouteSessionMismatchError',
      code: 'policy_denied',
      routeSessionId: SES_A,
      deliverySessionId: SES_B,
      message: expect.stringMatching(new RegExp(`session ${SES_A}.*session ${SES_B}`)),
    });
    expect(webhook.sent).toEqual([]);
  });

  it('reports a route whose adapter is not live (an operator adapter with no sink)', () => {
    const router = new SessionInteractionRouter();
    const operator = createOperatorAdapter();
    router.bind(SES_A, operator);
    expect(router.route(SES_A, 'operator')!.isLive()).toBe(false);
    const detach = operator.attach(() => undefined);
    expect(router.route(SES_A, 'operator')!.isLive()).toBe(true);
    detach();
    expect(router.route(SES_A, 'operator')!.isLive()).toBe(false);
  });
});
