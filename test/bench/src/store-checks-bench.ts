import { checkStoreFile, openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { benchRegistry, rebuildProjectors } from './fixtures.js';

/** What opening, checking and verifying a large seeded store costs (no raw baseline: SQLite's own work). */
export interface StoreCheckFigures {
  readonly bytes: number;
  /** The check every open runs (`integrity: 'bounded'`): structure, WAL, `quick_check` of all but `events`. */
  readonly boundedMs: number;
  /** `doctor` and `verify`: `quick_check` of every page. */
  readonly fullMs: number;
  /** `verifyChain()`: every event's hash recomputed from its stored content. */
  readonly chainEventsPerSecond: number;
}

/** Measures the file checks and the chain verification on a seeded log of `events` events. */
export async function benchStoreChecks(path: string, events: number): Promise<StoreCheckFigures> {
  const bounded = timed(() => checkStoreFile(path, { integrity: 'bounded' }));
  const full = timed(() => checkStoreFile(path, { integrity: 'full' }));
  const store = await openSqliteEventStore({ path, registry: benchRegistry, projectors: rebuildProjectors });
  try {
    const started = performance.now();
    const chain = await store.verifyChain();
    const ms = performance.now() - started;
    if (!chain.ok || chain.eventsChecked !== events) {
      throw new Error(`the seeded chain does not verify: ${JSON.stringify(chain)}`);
    }
    return {
      bytes: bounded.value?.bytes ?? 0,
      boundedMs: bounded.ms,
      fullMs: full.ms,
      chainEventsPerSecond: (events * 1000) / ms,
    };
  } finally {
    await store.close();
  }
}

function timed<T>(work: () => T): { value: T; ms: number } {
  const started = performance.now();
  const value = work();
  return { value, ms: performance.now() - started };
}
