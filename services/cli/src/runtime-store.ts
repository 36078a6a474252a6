import { existsSync } from 'node:fs';
import { DemiurgeError, ErrorCode } from '@demiurge/contracts';
import type { Projector } from '@demiurge/event-store';
import type { Synchronous } from '@demiurge/event-store-sqlite';
import { type HostStore, hostProjectors, loadConfig, openHostStore, storeSelection } from '@demiurge/host';
import type { HomePaths } from './home.js';

/** The read models the runtime keeps inline with its log: the host's (sessions, runs, tasks, work...). */
export const runtimeProjectors: readonly Projector[] = hostProjectors;

/** The names of {@link runtimeProjectors}, in registration order. */
export const runtimeProjectorNames: readonly string[] = runtimeProjectors.map((p) => p.name);

/** There is no runtime database where a command that reads it looked. */
export class NoDatabaseError extends DemiurgeError {
  override readonly name = 'NoDatabaseError';
  readonly code = ErrorCode.CorruptDatabase;
  constructor(readonly path: string) {
    super(`no runtime database at ${path}; run "demiurge init" (or pass --home) first`);
  }
}

export interface OpenStoreOptions {
  /** Refuse ({@link NoDatabaseError}) instead of creating the database: every command but `init`/`demo`. */
  readonly mustExist: boolean;
  /** SQLite only; default the configuration's `store.synchronous`. */
  readonly synchronous?: Synchronous;
}

/**
 * Opens the home's store with the host's projectors: the one its configuration names (`store.kind`,
 * `store.url`, `DEMIURGE_STORE_URL`), the home's SQLite file by default. A PostgreSQL database is created
 * by its administrator, so `mustExist` only applies to the SQLite file.
 */
export async function openRuntimeStore(paths: HomePaths, options: boolean | OpenStoreOptions): Promise<HostStore> {
  const { mustExist, synchronous } =
    typeof options === 'boolean' ? { mustExist: options, synchronous: undefined } : options;
  const selection = storeSelection(paths.home, loadConfig(paths.home));
  if (selection.kind === 'sqlite') {
    if (mustExist && !existsSync(selection.path)) throw new NoDatabaseError(selection.path);
    return openHostStore(synchronous ? { ...selection, synchronous } : selection, { projectors: runtimeProjectors });
  }
  return openHostStore(selection, { projectors: runtimeProjectors });
}

/** Opens the home's store (which must exist), runs `fn`, and closes the store whatever happens. */
export async function withRuntimeStore<T>(paths: HomePaths, fn: (store: HostStore) => Promise<T>): Promise<T> {
  const store = await openRuntimeStore(paths, true);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}
