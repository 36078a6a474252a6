import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseNewerThanCodeError } from '@demiurge/event-store';
import Database from 'better-sqlite3';
import { migrations, SCHEMA_VERSION } from './migrations.js';
import { createQueryBuilder } from './schema.js';
import { checkStoreFile } from './store-file-check.js';

export type Synchronous = 'FULL' | 'NORMAL';

export interface ConnectionOptions {
  /** `FULL` (the default) fsyncs every commit; `NORMAL` in WAL can lose the last commits on power loss. */
  readonly synchronous?: Synchronous;
  /** How long a writer waits for another process's write lock before retrying. Default 5000 ms. */
  readonly busyTimeoutMs?: number;
  /**
   * Files up to this size get a whole-file `PRAGMA quick_check` before anything is written; larger ones get
   * it for every table but `events`. Default 128 MiB.
   */
  readonly fullCheckMaxBytes?: number;
}

/**
 * Opens (creating when absent) a Demiurge database: the file is checked before anything is written
 * ({@link checkStoreFile}: a damaged file, one newer than this code or not ours is refused and left
 * byte-identical, its WAL not checkpointed), then every connection setting is applied and pending migrations
 * run under `BEGIN IMMEDIATE`.
 */
export function openDatabase(path: string, options: ConnectionOptions = {}): Database.Database {
  if (path !== ':memory:') {
    checkStoreFile(path, {
      integrity: 'bounded',
      ...(options.fullCheckMaxBytes === undefined ? {} : { fullCheckMaxBytes: options.fullCheckMaxBytes }),
    });
  }
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  try {
    configure(db, options);
    migrate(db, path);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/** The settings every connection gets; `journal_mode` and `synchronous` are read back to be sure. */
export function configure(db: Database.Database, options: ConnectionOptions = {}): void {
  // busy_timeout first: switching to WAL needs a lock another process may hold while it migrates.
  db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
  const mode = db.pragma('journal_mode = WAL', { simple: true });
  if (mode !== 'wal' && db.name !== ':memory:') throw new Error(`could not switch ${db.name} to WAL (got ${mode})`);
  db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
  db.pragma('foreign_keys = ON');
}

function migrate(db: Database.Database, path: string): void {
  // A database at this schema version needs nothing: a plain read, so opening never waits for the write lock.
  if (db.pragma('user_version', { simple: true }) === SCHEMA_VERSION) return;
  const qb = createQueryBuilder();
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
  const apply = db.transaction(() => {
    const current = db.pragma('user_version', { simple: true }) as number;
    if (current > SCHEMA_VERSION) throw new DatabaseNewerThanCodeError(path, current, SCHEMA_VERSION);
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      for (const query of migration.up(qb)) db.prepare(query.sql).run(...(query.parameters as unknown[]));
      migration.backfill?.(db);
      const record = qb
        .insertInto('schema_migrations')
        .values({ version: migration.version, name: migration.name, applied_at: new Date().toISOString() })
        .compile();
      db.prepare(record.sql).run(...(record.parameters as unknown[]));
      db.pragma(`user_version = ${migration.version}`);
    }
  });
  apply.immediate();
}
