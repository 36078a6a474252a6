import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IdGenerator } from '@demiurge/contracts';
import { createFakeClock, createSeededIdGenerator, type FakeClock } from '@demiurge/contracts/testing';
import { DurableWorkRuntime, HostWorkLifecycleRuntime, RuntimeControlPlane } from '@demiurge/control-plane';
import type { EventStore } from '@demiurge/event-store';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { sessionLifecycle, verifyLog } from '@demiurge/lifecycle';
import { expect } from 'vitest';
import {
  type FireHandler,
  type FireResult,
  SchedulerRuntime,
  type SchedulerRuntimeOptions,
  type StartSessionSpec,
  schedulerProjectors,
  type TickReport,
} from '../src/index.js';

export const CORE = 'default';

/** A scheduler on a real SQLite file with a fake clock and a core directory of schedule files. */
export interface SchedulerEnv {
  readonly dir: string;
  readonly coreDir: string;
  readonly path: string;
  readonly clock: FakeClock;
  readonly ids: IdGenerator;
  readonly store: EventStore;
  readonly work: DurableWorkRuntime;
  readonly host: HostWorkLifecycleRuntime;
  readonly controlPlane: RuntimeControlPlane;
  readonly scheduler: SchedulerRuntime;
  /** The harness's `startSession`: appends `session.created` (to wrap in tests). */
  readonly startSession: SchedulerRuntimeOptions['startSession'];
  /** The sessions `startSession` opened, with the spec it got. */
  readonly sessions: { sessionId: string; spec: StartSessionSpec }[];
  write(id: string, yaml: string): void;
  remove(id: string): void;
  /** Another scheduler (another owner) on the same store, e.g. a second host. */
  runtime(options?: Partial<SchedulerRuntimeOptions>): SchedulerRuntime;
  /** One tick then one runDue. */
  cycle(): Promise<{ tick: TickReport; fired: FireResult[] }>;
  dispose(): Promise<void>;
}

export interface EnvOptions {
  readonly start: string;
  readonly missedAfterMs?: number;
  readonly leaseMs?: number;
  readonly fire?: FireHandler;
  readonly startSession?: SchedulerRuntimeOptions['startSession'];
}

export async function openEnv(options: EnvOptions): Promise<SchedulerEnv> {
  const dir = mkdtempSync(join(tmpdir(), 'demiurge-scheduler-'));
  const coreDir = join(dir, 'core');
  mkdirSync(join(coreDir, 'schedules'), { recursive: true });
  const path = join(dir, 'runtime.sqlite3');
  const clock = createFakeClock(Date.parse(options.start));
  const ids = createSeededIdGenerator(clock, 7);
  const store = await openSqliteEventStore({ path, projectors: schedulerProjectors, clock, ids });
  const work = new DurableWorkRuntime({ store, clock, ids, owner: 'host-a', leaseMs: options.leaseMs ?? 30_000 });
  const host = new HostWorkLifecycleRuntime({ store, clock, ids, work });
  const controlPlane = new RuntimeControlPlane({ store, clock, ids, work });
  const sessions: SchedulerEnv['sessions'] = [];
  const startSession = async (spec: StartSessionSpec) => {
    const sessionId = ids.next('ses');
    await store.append(
      {
        streamType: sessionLifecycle.streamType,
        streamId: sessionId,
        expectedVersion: 'no_stream',
        events: [{ type: 'session.created', data: { sessionId, title: spec.title, coreId: spec.coreId } }],
      },
      { meta: { actor: spec.actor, sessionId } },
    );
    sessions.push({ sessionId, spec });
    return { sessionId };
  };
  const runtime = (over: Partial<SchedulerRuntimeOptions> = {}) =>
    new SchedulerRuntime({
      store,
      clock,
      ids,
      host,
      work,
      controlPlane,
      coreId: CORE,
      owner: 'host-a',
      schedules: coreDir,
      startSession: options.startSession ?? startSession,
      ...(options.fire ? { fire: options.fire } : {}),
      ...(options.missedAfterMs === undefined ? {} : { missedAfterMs: options.missedAfterMs }),
      ...over,
    });
  const scheduler = runtime();
  return {
    dir,
    coreDir,
    path,
    clock,
    ids,
    store,
    work,
    host,
    controlPlane,
    scheduler,
    startSession,
    sessions,
    write: (id, yaml) => writeFileSync(join(coreDir, 'schedules', `${id}.yaml`), yaml),
    remove: (id) => rmSync(join(coreDir, 'schedules', `${id}.yaml`)),
    runtime,
    async cycle() {
      const tick = await scheduler.tick();
      const fired = await scheduler.runDue({ limit: 20 });
      return { tick, fired };
    },
    async dispose() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Moves the clock to `iso` in steps of `stepMs`, cycling at each step; returns every fire. */
export async function runUntil(env: SchedulerEnv, iso: string, stepMs: number): Promise<FireResult[]> {
  const fired: FireResult[] = [];
  const end = Date.parse(iso);
  while (env.clock.now() < end) {
    env.clock.set(Math.min(end, env.clock.now() + stepMs));
    fired.push(...(await env.cycle()).fired);
  }
  return fired;
}

/** Every event of the log replays through the lifecycle machines without a violation. */
export async function expectCleanLog(store: EventStore): Promise<void> {
  const report = await verifyLog(store.iterate());
  expect(report.violations).toEqual([]);
  expect(report.ok).toBe(true);
}

/** Event types of the log, in order, optionally only some. */
export async function eventTypes(store: EventStore, prefix = ''): Promise<string[]> {
  return (await store.readAll()).map((e) => e.type).filter((t) => t.startsWith(prefix));
}
