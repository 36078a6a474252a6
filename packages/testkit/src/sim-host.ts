import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import type { IdGenerator } from '@demiurge/contracts';
import { createFakeClock, createSeededIdGenerator, type FakeClock } from '@demiurge/contracts/testing';
import { createRuntime, DemiurgeApp, hostProjectors, openHostStore, silentLogger, storePath } from '@demiurge/host';
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
    env: {},
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
