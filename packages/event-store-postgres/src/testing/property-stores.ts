import type { Clock, EventRegistry, IdGenerator } from '@demiurge/contracts';
import { createInMemoryEventStore, type EventStore, type Projector } from '@demiurge/event-store';
import { openPostgresEventStore } from '../postgres-event-store.js';
import type { TestPostgres } from './test-postgres.js';
import { testPostgresOrSkip } from './test-postgres-or-skip.js';

/** What a property run opens its store with. */
export interface PropertyStoreOptions {
  readonly projectors: readonly Projector[];
  readonly clock?: Clock;
  readonly ids?: IdGenerator;
  readonly registry?: EventRegistry;
}

/**
 * The stores of a property suite that runs on more than one backend: `memory` (the in-memory store) or
 * `postgres` (a fresh database of one server for the file, per run), chosen by `DEMIURGE_TEST_STORE`.
 */
export interface PropertyStores {
  readonly kind: 'memory' | 'postgres';
  /** Empty, or why the PostgreSQL variant is skipped here (outside CI, when the server could not start). */
  readonly skipped: string;
  /** Runs for this backend: PostgreSQL's round trips make each run slower, so it runs fewer. */
  runs(counts: { memory: number; postgres: number }): number;
  /** A new, empty store for one run; on PostgreSQL the previous run's store is closed and its database given back. */
  open(options: PropertyStoreOptions): Promise<EventStore>;
  /** Closes the last store and stops the server (call from `afterAll`). */
  close(): Promise<void>;
}

/**
 * Opens the stores of a property suite for `DEMIURGE_TEST_STORE` (`postgres`, else the in-memory store).
 *
 * @example
 * const stores = await propertyStores();
 * afterAll(() => stores.close());
 * (stores.skipped ? describe.skip : describe)(`task-board on ${stores.kind}${stores.skipped}`, () => { ... });
 * const store = await stores.open({ projectors: [taskBoardProjector], clock, ids });
 */
export async function propertyStores(kind = process.env.DEMIURGE_TEST_STORE): Promise<PropertyStores> {
  if (kind !== 'postgres') {
    return {
      kind: 'memory',
      skipped: '',
      runs: (counts) => counts.memory,
      open: async (options) => createInMemoryEventStore(options),
      close: async () => {},
    };
  }
  const { server, skipped } = await testPostgresOrSkip();
  let last: { store: EventStore; url: string } | undefined;
  const release = async (server: TestPostgres) => {
    if (!last) return;
    const { store, url } = last;
    last = undefined;
    await store.close();
    await server.dropDatabase(url);
  };
  return {
    kind: 'postgres',
    skipped,
    runs: (counts) => counts.postgres,
    async open(options) {
      if (!server) throw new Error(`PostgreSQL is not available${skipped}`);
      await release(server);
      const url = await server.createDatabase();
      const store = await openPostgresEventStore({ url, maxConnections: 2, ...options });
      last = { store, url };
      return store;
    },
    async close() {
      if (!server) return;
      await release(server);
      await server.stop();
    },
  };
}
