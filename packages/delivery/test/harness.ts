import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IdGenerator, RecordedEvent } from '@demiurge/contracts';
import { createFakeClock, createSeededIdGenerator, type FakeClock } from '@demiurge/contracts/testing';
import { controlPlaneProjectors, DurableWorkRuntime, HostWorkLifecycleRuntime } from '@demiurge/control-plane';
import type { EventStore } from '@demiurge/event-store';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { verifyLog } from '@demiurge/lifecycle';
import { expect } from 'vitest';
import { DeliveryRuntime, type DeliveryRuntimeOptions, SessionInteractionRouter } from '../src/index.js';

export const START = Date.parse('2026-05-01T09:00:00.000Z');
export const LEASE_MS = 30_000;

/** The delivery runtime on a real SQLite file with a fake clock; `reopen` is a restart (routes are lost). */
export interface Runtime {
  readonly dir: string;
  readonly path: string;
  readonly clock: FakeClock;
  readonly ids: IdGenerator;
  store: EventStore;
  work: DurableWorkRuntime;
  host: HostWorkLifecycleRuntime;
  router: SessionInteractionRouter;
  delivery: DeliveryRuntime;
  reopen(): Promise<void>;
  dispose(): Promise<void>;
}

type Tuning = Partial<Pick<DeliveryRuntimeOptions, 'retry' | 'unroutedRetry' | 'failureHistory'>>;

export async function openRuntime(options: { seed?: number } & Tuning = {}): Promise<Runtime> {
  const dir = mkdtempSync(join(tmpdir(), 'demiurge-delivery-'));
  const path = join(dir, 'runtime.sqlite3');
  const clock = createFakeClock(START);
  const ids = createSeededIdGenerator(clock, options.seed ?? 3);
  const { seed: _seed, ...tuning } = options;
  const build = async () => {
    const store = await openSqliteEventStore({ path, projectors: controlPlaneProjectors, clock, ids });
    const work = new DurableWorkRuntime({ store, clock, ids, owner: 'test-host', leaseMs: LEASE_MS });
    const host = new HostWorkLifecycleRuntime({ store, clock, ids, work });
    const router = new SessionInteractionRouter();
    const delivery = new DeliveryRuntime({ store, clock, ids, work, router, owner: 'test-host', ...tuning });
    return { store, work, host, router, delivery };
  };
  const runtime: Runtime = {
    dir,
    path,
    clock,
    ids,
    ...(await build()),
    async reopen() {
      await runtime.store.close();
      Object.assign(runtime, await build());
    },
    async dispose() {
      await runtime.store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return runtime;
}

/** A session with one assistant message, queued for delivery on `channel` (one commit for message and intent). */
export async function queueMessage(
  rt: Pick<Runtime, 'store' | 'ids' | 'host'>,
  options: { sessionId?: string; text: string; channel: string },
): Promise<{ sessionId: string; messageId: string; deliveryId: string; workId: string }> {
  const sessionId = options.sessionId ?? (await createSession(rt.store, rt.ids));
  const messageId = rt.ids.next('msg');
  const message = {
    streamType: 'session',
    streamId: sessionId,
    expectedVersion: await rt.store.streamVersion(sessionId),
    events: [
      {
        type: 'message.recorded',
        data: { messageId, sessionId, role: 'assistant', text: options.text, visibility: 'persist' },
      },
    ],
  };
  const { deliveryId, workId } = await rt.host.enqueueDelivery({ sessionId, messageId, channel: options.channel }, [
    message,
  ]);
  return { sessionId, messageId, deliveryId, workId };
}

export async function createSession(store: EventStore, ids: IdGenerator): Promise<string> {
  const sessionId = ids.next('ses');
  await store.append({
    streamType: 'session',
    streamId: sessionId,
    expectedVersion: 'no_stream',
    events: [{ type: 'session.created', data: { sessionId, title: 'delivery test', coreId: 'default' } }],
  });
  return sessionId;
}

/** The session's `message.recorded` events. */
export async function messages(store: EventStore, sessionId: string): Promise<RecordedEvent[]> {
  return (await store.readStream(sessionId)).filter((e) => e.type === 'message.recorded');
}

/** The log is legal for every machine, and every projection equals a rebuild from the log. */
export async function expectConsistent(store: EventStore): Promise<void> {
  const report = await verifyLog(store.iterate());
  expect(report.violations).toEqual([]);
  expect(report.ok).toBe(true);
  const live: Record<string, unknown> = {};
  for (const name of store.projectorNames) live[name] = await store.projection(name).dump();
  await store.rebuild();
  for (const name of store.projectorNames) expect(await store.projection(name).dump()).toEqual(live[name]);
}

/** The types of the events of one stream, in order. */
export async function streamTypes(store: EventStore, streamId: string): Promise<string[]> {
  return (await store.readStream(streamId)).map((e) => e.type);
}
