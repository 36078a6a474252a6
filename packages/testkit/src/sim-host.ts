import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import type { IdGenerator } from '@demiurge/contracts';
import { createFakeClock, createSeededIdGenerator, type FakeClock } from '@demiurge/contracts/testing';
import { createScratchSchema } from '@demiurge/event-store-postgres';
import {
  createRuntime,
  DemiurgeApp,
  type HostStore,
  hostProjectors,
  isPostgresStore,
  openHostStore,
  silentLogger,
  storePath,
} from '@demiurge/host';
import { VirtualTimers } from './sim-clock.js';
import type { SimWorld } from './sim-world.js';

/** The simulated time every scenario starts at. */
export const SIM_EPOCH = Date.parse('2026-01-01T00:00:00.000Z');

/**
 * The ports every host of one scenario shares: the virtual clock, its timers (an approval's expiry, a paused
 * run's poll) and the seeded ids (they outlive a crash).
 */
export interface SimPorts {
  readonly clock: FakeClock;
  readonly timers: VirtualTimers;
  readonly ids: IdGenerator;
}

export function simPorts(seed: number): SimPorts {
  const clock = createFakeClock(SIM_EPOCH);
  return { clock, timers: new VirtualTimers(clock), ids: createSeededIdGenerator(clock, seed) };
}

/**
 * Starts a host of the real composition (`createRuntime` + `DemiurgeApp`) on the scenario's home, with the
 * world's provider, tool, sink and processes injected and no background loop: the simulator calls each loop's
 * step itself, at virtual times. Recovery runs as at a real start (runs whose owner is gone are resumed).
 */
export async function startSimHost(options: {
  home: string;
  core: string | undefined;
  owner: string;
  ports: SimPorts;
  world: SimWorld;
  /** Whether a simulated host is still running (a crashed one is not; a cut-off one is). */
  isHostAlive: (owner: string) => boolean;
  /** The scenario's PostgreSQL schema ({@link SimStoreHandle.url}); absent: the home's SQLite file. */
  storeUrl?: string | undefined;
}): Promise<DemiurgeApp> {
  const { world, ports } = options;
  const parts = await createRuntime({
    home: options.home,
    clock: ports.clock,
    timers: ports.timers,
    ids: ports.ids,
    owner: options.owner,
    logger: silentLogger,
    provider: world.provider(),
    taskHandlers: { 'terminal.exec': world.processHandler() },
    // The process's own DEMIURGE_STORE_URL is never read: the scenario's store is the one given here.
    env: options.storeUrl ? { DEMIURGE_STORE_URL: options.storeUrl } : {},
    deterministicFlush: true,
    isHostAlive: options.isHostAlive,
    ...(options.core ? { overrides: { core: options.core } } : {}),
  });
  try {
    parts.turns.tools.register(world.tool());
    parts.operatorAdapter.attach(world.sink);
    const app = new DemiurgeApp(parts);
    await app.recover(true);
    return app;
  } catch (err) {
    await parts.store.close();
    throw err;
  }
}

/** The config of a scenario's home: the fast file mode (a simulated crash loses nothing the OS has). */
export const SIM_CONFIG = [
  'store:',
  '  synchronous: NORMAL',
  'scheduler:',
  '  enabled: false',
  'plan_mode:',
  '  on_write: ask',
  'compaction:',
  '  enabled: false',
  '',
].join('\n');

const templates = new Map<string, string>();

/**
 * Gives a new home the store file every home starts with (migrated, every projector at position 0): made once
 * per base directory and process, then copied, which costs far less than migrating a new file for each
 * scenario. The log is empty either way, so this changes no scenario's log.
 */
export async function seedStoreFile(base: string, home: string): Promise<void> {
  let template = templates.get(base);
  if (!template) {
    const dir = mkdtempSync(join(base, 'demiurge-sim-template-'));
    template = join(dir, 'runtime.sqlite3');
    const store = await openHostStore(
      { kind: 'sqlite', path: template, synchronous: 'NORMAL' },
      { projectors: hostProjectors },
    );
    await store.close();
    templates.set(base, template);
  }
  mkdirSync(join(home, 'runtime'), { recursive: true, mode: 0o700 });
  copyFileSync(template, storePath(home));
}

/**
 * Where scenarios keep their log: a fresh SQLite file in each scenario's home (default), or a PostgreSQL
 * database given by `url` in which each scenario gets a fresh schema of its own (its user needs `CREATE` on the
 * database), dropped after the run. Restarts and second hosts of a scenario open the same file or schema.
 */
export type SimStore = { readonly kind: 'sqlite' } | { readonly kind: 'postgres'; readonly url: string };

/** A scenario's store, made before its first host starts. */
export interface SimStoreHandle {
  /** The scenario's PostgreSQL URL (its schema's), or undefined on SQLite (the home's file). */
  readonly url: string | undefined;
  /** Removes the scenario's schema (PostgreSQL; the home, and its SQLite file, go with the home). */
  dispose(): Promise<void>;
}

/** Makes a scenario's store: the template SQLite file copied into its home, or a fresh PostgreSQL schema. */
export async function prepareSimStore(
  store: SimStore | undefined,
  base: string,
  home: string,
): Promise<SimStoreHandle> {
  if (store?.kind !== 'postgres') {
    await seedStoreFile(base, home);
    return { url: undefined, dispose: async () => {} };
  }
  mkdirSync(join(home, 'runtime'), { recursive: true, mode: 0o700 });
  const schema = await createScratchSchema(store.url, 'demiurge_sim');
  return { url: schema.url, dispose: () => schema.drop() };
}

/** Whether any of these stores has a statement in flight (PostgreSQL; a SQLite store never waits on a server). */
export function storesBusy(stores: readonly HostStore[]): boolean {
  return stores.some((store) => isPostgresStore(store) && store.pendingQueries() > 0);
}
