import { closeSync, existsSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { CorruptDatabaseError, DatabaseNewerThanCodeError } from '@demiurge/event-store';
import Database from 'better-sqlite3';
import { migrations, SCHEMA_VERSION } from './migrations.js';
import { createQueryBuilder } from './schema.js';

export type Synchronous = 'FULL' | 'NORMAL';

export interface ConnectionOptions {
  /** `FULL` (the default) fsyncs every commit; `NORMAL` in WAL can lose the last commits on power loss. */
  readonly synchronous?: Synchronous;
  /** How long a writer waits for another process's write lock before retrying. Default 5000 ms. */
  readonly busyTimeoutMs?: number;
}

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/**
 * Opens (creating when absent) a Demiurge database: the file is checked before anything is written,
 * a database newer than this code or not ours is refused and left byte-identical, then every
 * connection setting is applied and pending migrations run under `BEGIN IMMEDIATE`.
 */
export function openDatabase(path: string, options: ConnectionOptions = {}): Database.Database {
  if (path !== ':memory:') inspectExisting(path);
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

function inspectExisting(path: string): void {
  if (!existsSync(path)) return;
  const stat = statSync(path);
  if (!stat.isFile()) throw new CorruptDatabaseError(path, 'not a regular file');
  if (stat.size === 0) return;
  const header = Buffer.alloc(16);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, header, 0, 16, 0);
  } finally {
    closeSync(fd);
  }
  if (!header.equals(SQLITE_HEADER)) throw new CorruptDatabaseError(path, 'not an SQLite file: its header is wrong');
  let probe: Database.Database | undefined;
  try {
    probe = new Database(path, { readonly: true, fileMustExist: true });
    // A read-only probe cannot switch journal modes; it only needs to wait for a writer.
    probe.pragma('busy_timeout = 5000');
    const version = probe.pragma('user_version', { simple: true }) as number;
    const tables = (
      probe.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]
    ).map((t) => t.name);
    if (version > SCHEMA_VERSION) throw new DatabaseNewerThanCodeError(path, version, SCHEMA_VERSION);
    if (tables.length > 0 && !tables.includes('schema_migrations')) {
      throw new CorruptDatabaseError(
        path,
        `an SQLite database that Demiurge did not create (tables: ${tables.join(', ')})`,
      );
    }
  } catch (err) {
    if (err instanceof DatabaseNewerThanCodeError || err instanceof CorruptDatabaseError) throw err;
    throw new CorruptDatabaseError(path, (err as Error).message, { cause: err });
  } finally {
    probe?.close();
  }
}

function migrate(db: Database.Database, path: string): void {
  const qb = createQueryBuilder();
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
  const apply = db.transaction(() => {
    const current = db.pragma('user_version', { simple: true }) as number;
    if (current > SCHEMA_VERSION) throw new DatabaseNewerThanCodeError(path, current, SCHEMA_VERSION);
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      for (const query of migration.up(qb)) db.prepare(query.sql).run(...(query.parameters as unknown[]));
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
