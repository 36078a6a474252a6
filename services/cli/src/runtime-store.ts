import { existsSync } from 'node:fs';
import { DemiurgeError, ErrorCode } from '@demiurge/contracts';
import type { Projector } from '@demiurge/event-store';
import {
  openSqliteEventStore,
  type SqliteEventStore,
  type StoreFileReport,
  type Synchronous,
} from '@demiurge/event-store-sqlite';
import { hostProjectors } from '@demiurge/host';
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
  readonly synchronous?: Synchronous;
  /** Told what the store's check at open found (whether `quick_check` ran or was remembered). */
  readonly onFileChecked?: (report: StoreFileReport) => void;
}

/** Opens the home's store with the host's projectors. */
export async function openRuntimeStore(
  paths: HomePaths,
  options: boolean | OpenStoreOptions,
): Promise<SqliteEventStore> {
  const { mustExist, synchronous, onFileChecked } =
    typeof options === 'boolean' ? { mustExist: options, synchronous: undefined, onFileChecked: undefined } : options;
  if (mustExist && !existsSync(paths.database)) throw new NoDatabaseError(paths.database);
  return openSqliteEventStore({
    path: paths.database,
    projectors: runtimeProjectors,
    ...(synchronous ? { synchronous } : {}),
    ...(onFileChecked ? { onFileChecked } : {}),
  });
}

/** Opens the home's store (which must exist), runs `fn`, and closes the store whatever happens. */
export async function withRuntimeStore<T>(paths: HomePaths, fn: (store: SqliteEventStore) => Promise<T>): Promise<T> {
  const store = await openRuntimeStore(paths, true);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}
