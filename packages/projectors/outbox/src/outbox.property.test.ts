import { createFakeClock, createSeededIdGenerator, propertySettings } from '@demiurge/contracts/testing';
import { type EventStore, loadAggregate } from '@demiurge/event-store';
import { propertyStores } from '@demiurge/event-store-postgres/testing';
import { allowedEvents, deliveryFold, deliveryLifecycle, transitionTable } from '@demiurge/lifecycle';
import { type DeliveryModel, deliveryWalk, edgeKey, MachineWalk, steps } from '@demiurge/lifecycle/testing';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { type DeliveryView, deliveryStatusKey, outboxProjector, sessionDeliveryKey } from './index.js';

type Dump = Record<string, Record<string, unknown>>;

/** The read model's invariants, against the walk's own model of each delivery. */
function checkInvariants(dump: Dump, models: readonly DeliveryModel[]) {
  const deliveries = (dump.deliveries ?? {}) as Record<string, DeliveryView>;
  const byStatus: Record<string, unknown> = {};
  const bySession: Record<string, unknown> = {};
  expect(Object.keys(deliveries).length).toBe(models.filter((m) => m.state !== 'none').length);
  for (const m of models) {
    const row = deliveries[m.deliveryId];
    if (m.state === 'none' || !row) {
      expect([m.state, row]).toEqual(['none', undefined]);
      continue;
    }
    expect(row).toMatchObject({ status: m.state, channel: m.channel, sessionId: m.sessionId, attempts: m.sends });
    expect(row.allowed).toEqual(allowedEvents(deliveryLifecycle, row.status));
    expect(row.unknownReason !== null).toBe(row.status === 'unknown');
    expect(row.unroutedReason !== null).toBe(row.status === 'unrouted');
    byStatus[deliveryStatusKey(row.status, row.deliveryId)] = {
      deliveryId: row.deliveryId,
      status: row.status,
      channel: row.channel,
    };
    bySession[sessionDeliveryKey(row.sessionId, row.deliveryId)] = { deliveryId: row.deliveryId, status: row.status };
  }
  // Exactly one by-status and one by-session entry per delivery, with its current status.
  expect(dump['by-status'] ?? {}).toEqual(byStatus);
  expect(dump['by-session'] ?? {}).toEqual(bySession);
}

/** The command side loads each delivery with the same fold (`deliveryFold`): its facts are the row's. */
async function checkAgreesWithCommandSide(store: EventStore, dump: Dump) {
  for (const row of Object.values((dump.deliveries ?? {}) as Record<string, DeliveryView>)) {
    const { state } = await loadAggregate(store, deliveryFold, row.deliveryId);
    expect(state).toEqual({
      status: row.status,
      queued: {
        deliveryId: row.deliveryId,
        sessionId: row.sessionId,
        messageId: row.messageId,
        workId: row.workId,
        channel: row.channel,
        conversationKey: row.conversationKey,
        at: row.queuedAt,
      },
      attempts: row.attempts,
      lastError: row.lastError,
      externalId: row.externalId,
      unroutedReason: row.unroutedReason,
      unknownReason: row.unknownReason,
      resolution: row.resolution,
    });
  }
}

// The in-memory store, or PostgreSQL (a fresh database per run) under the `postgres` project of vitest.config.ts.
const stores = await propertyStores();
afterAll(() => stores.close());

const describeOn = stores.skipped ? describe.skip : describe;

describeOn(`outbox projector properties on ${stores.kind}${stores.skipped}`, () => {
  it('equals a rebuild from the log, with exact indexes, after any accepted interleaving of deliveries', async () => {
    const settings = propertySettings(stores.runs({ memory: 100, postgres: 10 }));
    const taken = new Set<string>();
    await fc.assert(
      fc.asyncProperty(steps(3), fc.nat(), async (walkSteps, checkAt) => {
        const clock = createFakeClock();
        const ids = createSeededIdGenerator(clock, 17);
        const store = await stores.open({ projectors: [outboxProjector], clock, ids });
        const reader = store.projection('outbox');
        const walk = new MachineWalk(deliveryWalk(ids, [ids.next('ses'), ids.next('ses')]), ids, 3);
        for (const [i, s] of walkSteps.entries()) {
          clock.advance(s.delay);
          const { streamType, streamId, event, edge } = walk.next(s, clock.now());
          taken.add(edge);
          await store.append({ streamType, streamId, expectedVersion: 'any', events: [event] });
          if (i === checkAt % walkSteps.length) {
            const live = await reader.dump();
            checkInvariants(live, walk.models);
            await store.rebuild();
            expect(await reader.dump()).toEqual(live);
          }
        }
        const live = await reader.dump();
        checkInvariants(live, walk.models);
        await checkAgreesWithCommandSide(store, live);
        await store.rebuild();
        expect(await reader.dump()).toEqual(live);
      }),
      settings,
    );
    // The walks are worth something only if, together, they took every edge of the machine.
    if (settings.numRuns >= 100) {
      const edges = transitionTable(deliveryLifecycle).map((r) => edgeKey(r.from, r.event, r.to));
      expect(edges.filter((e) => !taken.has(e))).toEqual([]);
    }
  });
});
