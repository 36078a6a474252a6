import type { Clock, IdGenerator } from '@demiurge/contracts';
import type { DamagedStoreError, Projector } from '@demiurge/event-store';
import { type PostgresEventStore, redactUrl } from '@demiurge/event-store-postgres';
import {
  type CommitHook,
  openSqliteEventStore,
  type SqliteEventStore,
  type StoreFileReport,
} from '@demiurge/event-store-sqlite';
import type { HostConfig } from '../config.js';
import { storePath } from '../paths.js';

/**
 * The store a host runs on: the embedded SQLite file of its home, or a PostgreSQL database that several hosts
 * share. Both keep the same log, the same hash chain and the same inline projections.
 */
export type HostStore = SqliteEventStore | PostgresEventStore;

/** Which store a home uses, resolved from its configuration (`store.kind`, `store.url`, `DEMIURGE_STORE_URL`). */
export type StoreSelection =
  | {
      readonly kind: 'sqlite';
      readonly path: string;
      readonly synchronous: 'FULL' | 'NORMAL';
      /** The asynchronous projectors' target lag (`store.async_projection_lag_ms`); the store's default when absent. */
      readonly asyncProjectionLagMs?: number;
    }
  | { readonly kind: 'postgres'; readonly url: string };

/**
 * The store of a home: PostgreSQL when the configuration says `store.kind: postgres` (its `url`, or
 * `DEMIURGE_STORE_URL`, already merged by `loadConfig`), else the home's SQLite file.
 * @example
 * storeSelection(home, loadConfig(home)); // { kind: 'sqlite', path: '<home>/runtime/runtime.sqlite3', ... }
 */
export function storeSelection(home: string, config: HostConfig): StoreSelection {
  if (config.store.kind === 'postgres' && config.store.url) return { kind: 'postgres', url: config.store.url };
  const lag = config.store.async_projection_lag_ms;
  return {
    kind: 'sqlite',
    path: storePath(home),
    synchronous: config.store.synchronous,
    ...(lag === undefined ? {} : { asyncProjectionLagMs: lag }),
  };
}

/** Where a store keeps its log, for people: the SQLite file, or the PostgreSQL URL without its password. */
export function describeStore(selection: StoreSelection | HostStore): string {
  if ('kind' in selection) return selection.kind === 'sqlite' ? selection.path : redactUrl(selection.url);
  return isPostgresStore(selection) ? selection.url : selection.path;
}

/** True for a PostgreSQL store (its `url`), false for the SQLite file (its `path`). */
export function isPostgresStore(store: HostStore): store is PostgresEventStore {
  return !('path' in store);
}

export interface OpenHostStoreOptions {
  readonly projectors: readonly Projector[];
  readonly clock?: Clock;
  readonly ids?: IdGenerator;
  /** SQLite only: told once when the store stops on damage met in use (fail-stop). */
  readonly onDamaged?: (error: DamagedStoreError) => void;
  /** SQLite only: told what the file check at open found (whether `quick_check` ran or was remembered). */
  readonly onFileChecked?: (report: StoreFileReport) => void;
  /** SQLite only: the crash-point sweep's commit hook (see `hostTestHooks`). */
  readonly onCommit?: CommitHook;
  /**
   * A simulation's same-seed-same-log: on SQLite, group commits never take the timing-dependent microtask
   * shortcut; on PostgreSQL, the store runs in lockstep (its statements one at a time, in call order).
   */
  readonly deterministicFlush?: boolean;
}

/**
 * Opens the selected store with the given projectors. PostgreSQL failures to connect or log in are one
 * `StoreUnavailableError` line; a newer or foreign schema is refused on both backends.
 */
export async function openHostStore(selection: StoreSelection, options: OpenHostStoreOptions): Promise<HostStore> {
  const ports = { ...(options.clock ? { clock: options.clock } : {}), ...(options.ids ? { ids: options.ids } : {}) };
  if (selection.kind === 'postgres') {
    // Loaded on use: the driver (`pg`, and Node's fetch implementation it touches at import) costs a home on
    // SQLite about 30 ms of every start.
    const { openPostgresEventStore } = await import('@demiurge/event-store-postgres');
    if (options.onCommit) {
      throw new Error(
        'the crash-point commit hook (DEMIURGE_CRASH_AT_COMMIT, DEMIURGE_COMMIT_TRACE) needs a SQLite store',
      );
    }
    return openPostgresEventStore({
      url: selection.url,
      projectors: options.projectors,
      ...ports,
      ...(options.deterministicFlush ? { lockstep: true } : {}),
    });
  }
  return openSqliteEventStore({
    path: selection.path,
    projectors: options.projectors,
    synchronous: selection.synchronous,
    ...(selection.asyncProjectionLagMs === undefined ? {} : { asyncProjectionLagMs: selection.asyncProjectionLagMs }),
    ...ports,
    ...(options.onDamaged ? { onDamaged: options.onDamaged } : {}),
    ...(options.onFileChecked ? { onFileChecked: options.onFileChecked } : {}),
    ...(options.onCommit ? { onCommit: options.onCommit } : {}),
    ...(options.deterministicFlush ? { deterministicFlush: true } : {}),
  });
}
