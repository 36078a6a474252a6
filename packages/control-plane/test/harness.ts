import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IdGenerator } from '@demiurge/contracts';
import { createFakeClock, createSeededIdGenerator, type FakeClock } from '@demiurge/contracts/testing';
import type { EventStore } from '@demiurge/event-store';
import { openSqliteEventStore, type Synchronous } from '@demiurge/event-store-sqlite';
import {
  controlPlaneProjectors,
  DurableWorkRuntime,
  HostWorkLifecycleRuntime,
  RuntimeControlPlane,
} from '../src/index.js';

/** The control plane on a real SQLite file, with a fake clock; `reopen` is a crash and restart. */
export interface Runtime {
  readonly dir: string;
  readonly path: string;
  readonly clock: FakeClock;
  readonly ids: IdGenerator;
  store: EventStore;
  work: DurableWorkRuntime;
  tasks: RuntimeControlPlane;
  host: HostWorkLifecycleRuntime;
  reopen(): Promise<void>;
  dispose(): Promise<void>;
}

export async function openRuntime(
  options: { seed?: number; synchronous?: Synchronous; leaseMs?: number } = {},
): Promise<Runtime> {
  const dir = mkdtempSync(join(tmpdir(), 'demiurge-cp-'));
  const path = join(dir, 'runtime.sqlite3');
  const clock = createFakeClock(Date.parse('2026-05-01T09:00:00.000Z'));
  const ids = createSeededIdGenerator(clock, options.seed ?? 1);
  const build = async () => {
    const store = await openSqliteEventStore({
      path,
      projectors: controlPlaneProjectors,
      clock,
      ids,
      synchronous: options.synchronous ?? 'FULL',
    });
    const work = new DurableWorkRuntime({ store, clock, ids, owner: 'test-host', leaseMs: options.leaseMs ?? 10_000 });
    const tasks = new RuntimeControlPlane({ store, clock, ids, work });
    const host = new HostWorkLifecycleRuntime({ store, clock, ids, work });
    return { store, work, tasks, host };
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

/** Every projection's documents. */
export async function dumpProjections(store: EventStore): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const name of store.projectorNames) out[name] = await store.projection(name).dump();
  return out;
}
