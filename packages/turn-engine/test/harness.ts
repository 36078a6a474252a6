import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFakeClock, createSeededIdGenerator, type FakeClock } from '@demiurge/contracts/testing';
import type { EventStore } from '@demiurge/event-store';
import { openPostgresEventStore } from '@demiurge/event-store-postgres';
import { testPostgresOrSkip } from '@demiurge/event-store-postgres/testing';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { verifyLog } from '@demiurge/lifecycle';
import { type CompletionRequest, createFakeProvider, type FakeStep, type ModelProvider } from '@demiurge/providers';
import { afterAll, beforeEach } from 'vitest';
import { createTurnRuntime, type TurnRuntime, type TurnRuntimeOptions, turnProjectors } from '../src/index.js';

/**
 * The store these suites run on: a real SQLite file by default; PostgreSQL when `DEMIURGE_TEST_STORE=postgres`
 * (the `postgres` project of vitest.config.ts runs the same files again that way, one server per file).
 */
export const storeKind: 'sqlite' | 'postgres' = process.env.DEMIURGE_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';
const pg = storeKind === 'postgres' ? await testPostgresOrSkip() : undefined;
if (pg) {
  afterAll(() => pg.server?.stop());
  if (!pg.server) beforeEach((ctx) => ctx.skip(pg.skipped));
}

/** A provider that records every request it gets (and counts them) around another provider. */
export function recording(inner: ModelProvider): ModelProvider & { requests: CompletionRequest[] } {
  const requests: CompletionRequest[] = [];
  return {
    name: inner.name,
    model: inner.model,
    ...(inner.contextWindow !== undefined ? { contextWindow: inner.contextWindow } : {}),
    requests,
    complete(request) {
      requests.push(request);
      return inner.complete(request);
    },
  };
}

export interface Harness extends TurnRuntime {
  readonly dir: string;
  /** Where the store is: the SQLite file, or the PostgreSQL database's URL (a child process opens either). */
  readonly path: string;
  readonly workspace: string;
  readonly clock: FakeClock;
  readonly store: EventStore;
  readonly provider: ReturnType<typeof recording>;
  /** Every stream through its machine; the violations (none expected). */
  verify(): Promise<readonly unknown[]>;
  /** The event types of the log, in order. */
  types(): Promise<string[]>;
  close(): Promise<void>;
}

export async function openHarness(
  options: { script?: FakeStep[]; path?: string; dir?: string; owner?: string } & Partial<TurnRuntimeOptions> = {},
): Promise<Harness> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'demiurge-turn-'));
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  const created = !options.path && pg?.server ? await pg.server.createDatabase() : undefined;
  const path = options.path ?? created ?? join(dir, 'store.sqlite3');
  const clock = createFakeClock(Date.parse('2026-06-01T10:00:00.000Z'));
  const ids = createSeededIdGenerator(clock, Math.floor(Math.random() * 1e9));
  const store = path.startsWith('postgres')
    ? await openPostgresEventStore({ url: path, projectors: turnProjectors, clock, ids, maxConnections: 2 })
    : await openSqliteEventStore({ path, projectors: turnProjectors, clock, ids });
  const provider = recording(options.provider ?? createFakeProvider({ script: options.script ?? [] }));
  const runtime = createTurnRuntime({
    store,
    clock,
    ids,
    owner: options.owner ?? 'test-host',
    workspaceRoot: realpathSync(workspace),
    ...options,
    provider,
  });
  return {
    ...runtime,
    dir,
    path,
    workspace,
    clock,
    store,
    provider,
    async verify() {
      return (await verifyLog(store.iterate())).violations;
    },
    async types() {
      return (await store.readAll()).map((e) => e.type);
    },
    async close() {
      await store.close();
      if (created) await pg?.server?.dropDatabase(created);
      if (!options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
