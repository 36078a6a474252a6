import { existsSync } from 'node:fs';
import { DemiurgeError, ErrorCode } from '@demiurge/contracts';
import type { Projector } from '@demiurge/event-store';
import { openSqliteEventStore, type SqliteEventStore } from '@demiurge/event-store-sqlite';
import { sessionsProjector } from '@demiurge/projector-sessions';
import type { HomePaths } from './home.js';

/** The read models the runtime keeps inline with its log. */
export const runtimeProjectors: readonly Projector[] = [sessionsProjector];

/** There is no runtime database where a read-only command looked. */
export class NoDatabaseError extends DemiurgeError {
  override readonly name = 'NoDatabaseError';
  readonly code = ErrorCode.CorruptDatabase;
  constructor(readonly path: string) {
    super(`no runtime database at ${path}; run "demiurge demo" (or pass --home) first`);
  }
}

/** Opens the home's store; `mustExist` for commands that only read or rebuild. */
export async function openRuntimeStore(paths: HomePaths, mustExist: boolean): Promise<SqliteEventStore> {
  if (mustExist && !existsSync(paths.database)) throw new NoDatabaseError(paths.database);
  return openSqliteEventStore({ path: paths.database, projectors: runtimeProjectors });
}
