import type { NewEvent } from '@demiurge/contracts';
import { createFakeClock, createSeededIdGenerator } from '@demiurge/contracts/testing';
import { createInMemoryEventStore, type EventStore } from '@demiurge/event-store';
import { describe, expect, it } from 'vitest';
import {
  type DeliveryStatusEntry,
  type DeliveryView,
  deliveryStatusPrefix,
  OutboxCollections,
  outboxProjector,
  type SessionDeliveryEntry,
  sessionDeliveriesPrefix,
} from './index.js';

function setup() {
  const clock = createFakeClock();
  const ids = createSeededIdGenerator(clock, 9);
  const store = createInMemoryEventStore({ projectors: [outboxProjector], clock, ids });
  const reader = store.projection('outbox');
  const sessionId = ids.next('ses');
  const queue = async (channel = 'telegram', conversationKey?: string) => {
    const deliveryId = ids.next('dlv');
    await delivery(store, deliveryId, {
      type: 'delivery.queued',
      data: {
        deliveryId,
        sessionId,
        messageId: ids.next('msg'),
        workId: ids.next('wrk'),
        channel,
        ...(conversationKey ? { conversationKey } : {}),
      },
    });
    return deliveryId;
  };
  const statuses = async () =>
    Object.keys((await reader.dump())['by-status'] ?? {}).map((id) => id.replace(/\/dlv_.*/, ''));
  return { store, ids, clock, reader, sessionId, queue, statuses };
}

const delivery = (store: EventStore, deliveryId: string, ...events: NewEvent[]) =>
  store.append({ streamType: 'delivery', streamId: deliveryId, expectedVersion: 'any', events });

describe('outbox projector', () => {
  it('keeps a delivery row and moves it between statuses', async () => {
    const { store, reader, sessionId, queue, clock } = setup();
    const id = await queue('telegram', 'chat-1');
    const row = await reader.get<DeliveryView>(OutboxCollections.deliveries, id);
    expect(row).toMatchObject({
      deliveryId: id,
      sessionId,
      channel: 'telegram',
      conversationKey: 'chat-1',
      status: 'queued',
      attempts: 0,
      lastError: null,
      externalId: null,
      unroutedReason: null,
      unknownReason: null,
      resolution: null,
      queuedAt: '2026-01-01T00:00:00.000Z',
      version: 1,
      allowed: ['delivery.sending', 'delivery.unrouted'],
    });
    expect(await reader.list<DeliveryStatusEntry>('by-status', { prefix: deliveryStatusPrefix('queued') })).toEqual([
      { deliveryId: id, status: 'queued', channel: 'telegram' },
    ]);

    clock.advance(500);
    await delivery(store, id, { type: 'delivery.sending', data: { deliveryId: id, attempt: 1 } });
    await delivery(store, id, {
      type: 'delivery.failed',
      data: { deliveryId: id, error: { code: 'http_502', message: 'bad gateway' } },
    });
    expect(await reader.list('by-status', { prefix: deliveryStatusPrefix('queued') })).toEqual([]);
    expect(await reader.list<DeliveryStatusEntry>('by-status', { prefix: deliveryStatusPrefix('failed') })).toEqual([
      { deliveryId: id, status: 'failed', channel: 'telegram' },
    ]);
    clock.advance(500);
    await delivery(store, id, { type: 'delivery.sending', data: { deliveryId: id, attempt: 2 } });
    await delivery(store, id, { type: 'delivery.sent', data: { deliveryId: id, externalId: 'tg-991' } });
    expect(await reader.get<DeliveryView>('deliveries', id)).toMatchObject({
      status: 'sent',
      attempts: 2,
      externalId: 'tg-991',
      lastError: { code: 'http_502', message: 'bad gateway' },
      updatedAt: '2026-01-01T00:00:01.000Z',
      version: 5,
      allowed: [],
    });
    expect(
      await reader.list<SessionDeliveryEntry>('by-session', { prefix: sessionDeliveriesPrefix(sessionId) }),
    ).toEqual([{ deliveryId: id, status: 'sent' }]);
    expect(await reader.dump()).toMatchObject({ 'by-status': { [`sent/${id}`]: { status: 'sent' } } });
  });

  it('records why a delivery is unrouted or unknown, and the operator decision that resolves it', async () => {
    const { store, reader, queue, statuses } = setup();
    const lost = await queue('cli');
    const unknown = await queue('web');
    await delivery(store, lost, { type: 'delivery.unrouted', data: { deliveryId: lost, reason: 'no tty bound' } });
    await delivery(
      store,
      unknown,
      { type: 'delivery.sending', data: { deliveryId: unknown, attempt: 1 } },
      { type: 'delivery.unknown', data: { deliveryId: unknown, reason: 'host crashed' } },
    );
    expect(await statuses()).toEqual(['unknown', 'unrouted']);
    expect(await reader.get<DeliveryView>('deliveries', lost)).toMatchObject({ unroutedReason: 'no tty bound' });
    expect(await reader.get<DeliveryView>('deliveries', unknown)).toMatchObject({
      unknownReason: 'host crashed',
      allowed: ['delivery.resolved'],
    });

    await delivery(store, unknown, {
      type: 'delivery.resolved',
      data: { deliveryId: unknown, decision: 'retry', note: 'not in the chat' },
    });
    expect(await reader.get<DeliveryView>('deliveries', unknown)).toMatchObject({
      status: 'queued',
      unknownReason: null,
      resolution: { decision: 'retry', note: 'not in the chat', at: '2026-01-01T00:00:00.000Z' },
    });
    await delivery(store, lost, { type: 'delivery.sending', data: { deliveryId: lost, attempt: 1 } });
    expect(await reader.get<DeliveryView>('deliveries', lost)).toMatchObject({
      status: 'sending',
      unroutedReason: null,
    });
    expect(await statuses()).toEqual(['queued', 'sending']);
  });

  it('ignores events the machine refuses and events for deliveries never queued', async () => {
    const { store, ids, reader, queue } = setup();
    const id = await queue();
    const ghost = ids.next('dlv');
    await delivery(store, ghost, { type: 'delivery.sending', data: { deliveryId: ghost, attempt: 1 } });
    const before = await reader.dump();
    await delivery(
      store,
      id,
      { type: 'delivery.sent', data: { deliveryId: id } },
      { type: 'delivery.resolved', data: { deliveryId: id, decision: 'sent' } },
    );
    expect(await reader.dump()).toEqual(before);
    await store.rebuild();
    expect(await reader.dump()).toEqual(before);
  });
});
