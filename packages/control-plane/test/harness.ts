import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IdGenerator } from '@demiurge/contracts';
import { createFakeClock, createSeededIdGenerator, type FakeClock } from '@demiurge/contracts/testing';
import type { EventStore } from '@demiurge/event-store';
import { openPostgresEventStore } from '@demiurge/event-store-postgres';
import { testPostgresOrSkip } from '@demiurge/event-store-postgres/testing';
import { openSqliteEventStore, type Synchronous } from '@demiurge/event-store-sqlite';
import { afterAll, beforeEach } from 'vitest';
import {
  controlPlaneProjectors,
  DurableWorkRuntime,
  HostWorkLifecycleRuntime,
  RuntimeControlPlane,
} from '../src/index.js';

/**
 * The store these suites run on: a real SQLite file by default; PostgreSQL when `DEMIURGE_TEST_STORE=postgres`
 * (the `postgres` project of vitest.config.ts runs the same files again that way, one server per file).
 */
export const storeKind: 'sqlite' | 'postgres' = process.env.DEMIURGE_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';

/** fast-check runs for this store: PostgreSQL's round trips make each run slower, so it runs fewer. */
export const runsOn = (runs: { sqlite: number; postgres: number }): number => runs[storeKind];

const pg = storeKind === 'postgres' ? await testPostgresOrSkip() : undefined;
if (pg) {
  afterAll(() => pg.server?.stop());
  if (!pg.server) beforeEach((ctx) => ctx.skip(pg.skipped));
}

/** A fresh PostgreSQL database of this file's server (dropped after the file), or undefined on SQLite. */
export async function testDatabase(): Promise<string | undefined> {
  return pg?.server?.createDatabase();
}

/** The control plane on a real store (SQLite file or PostgreSQL database), with a fake clock; `reopen` is a crash and restart. */
export interface Runtime {
  readonly dir: string;
  /** The SQLite file (tests about SQLite's own files use it; unused on PostgreSQL). */
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
  // On PostgreSQL each runtime gets a fresh database; reopening opens the same database again.
  const url = pg?.server ? await pg.server.createDatabase() : undefined;
  const clock = createFakeClock(Date.parse('2026-05-01T09:00:00.000Z'));
  const ids = createSeededIdGenerator(clock, options.seed ?? 1);
  const build = async () => {
    const store = url
      ? await openPostgresEventStore({ url, projectors: controlPlaneProjectors, clock, ids, maxConnections: 2 })
      : await openSqliteEventStore({
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
      if (url) await pg?.server?.dropDatabase(url);
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
