import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { CorruptDatabaseError } from '@demiurge/event-store';
import Database from 'better-sqlite3';
import { includedPosition } from './event-rows.js';

// Reads of a store file without opening it as a store: a consistent copy (`demiurge verify` checks the
// copy) and a read-only look at the schema (`demiurge doctor`), neither of which the EventStore port
// offers. Both open the file read-only, so the user's store is never written.

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/** Refuses a file that is not an SQLite database, with the store's own error, before SQLite touches it. */
export function assertSqliteFile(path: string): void {
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
}

function openReadOnly(path: string): Database.Database {
  assertSqliteFile(path);
  try {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    return db;
  } catch (err) {
    throw new CorruptDatabaseError(path, (err as Error).message, { cause: err });
  }
}

/**
 * Copies the store file, WAL content included, as one consistent snapshot (`VACUUM INTO` on a read-only
 * connection: another process may keep writing meanwhile). `dest` must not exist.
 */
export function snapshotDatabase(path: string, dest: string): void {
  if (existsSync(dest)) throw new Error(`snapshot target ${dest} exists`);
  const db = openReadOnly(path);
  try {
    db.prepare('VACUUM INTO ?').run(dest);
  } catch (err) {
    throw new CorruptDatabaseError(path, `could not copy it: ${(err as Error).message}`, { cause: err });
  } finally {
    db.close();
  }
}

/** The schema facts `doctor` reports, read without migrating anything. */
export interface SchemaInfo {
  /** `PRAGMA user_version`: the last migration applied (0 for a new, empty file). */
  readonly version: number;
  /** The tables in the file. */
  readonly tables: readonly string[];
  /** The projector checkpoints recorded in the file (name, version, and the position it includes: the head for one following it). */
  readonly checkpoints: readonly { name: string; version: number; position: number }[];
  /** The last log position. */
  readonly head: number;
}

/**
 * The schema facts of a store file, read-only, without migrating anything.
 * @example
 * const { version, head } = readSchemaInfo('/home/me/.demiurge/runtime/runtime.sqlite3');
 */
export function readSchemaInfo(path: string): SchemaInfo {
  const db = openReadOnly(path);
  try {
    const version = db.pragma('user_version', { simple: true }) as number;
    const tables = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]
    ).map((t) => t.name);
    const head = tables.includes('events')
      ? ((db.prepare('SELECT COALESCE(MAX(position), 0) AS head FROM events').get() as { head: number }).head ?? 0)
      : 0;
    // `follows_head` exists from migration 3 on: a checkpoint that follows the head includes the whole log.
    const checkpoints = tables.includes('projector_checkpoints')
      ? (
          db.prepare('SELECT * FROM projector_checkpoints ORDER BY name').all() as {
            name: string;
            version: number;
            position: number;
            follows_head?: number;
          }[]
        ).map((r) => ({ name: r.name, version: r.version, position: includedPosition(r, head) }))
      : [];
    return { version, tables, checkpoints, head };
  } catch (err) {
    if (err instanceof CorruptDatabaseError) throw err;
    throw new CorruptDatabaseError(path, (err as Error).message, { cause: err });
  } finally {
    db.close();
  }
}
