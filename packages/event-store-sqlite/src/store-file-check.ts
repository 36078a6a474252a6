import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { CorruptDatabaseError, DamagedStoreError, DatabaseNewerThanCodeError } from '@demiurge/event-store';
import Database from 'better-sqlite3';
import { forgetCheck, rememberCheck, rememberedCheck, sameIdentity, storeIdentity } from './check-record.js';
import { SCHEMA_VERSION } from './migrations.js';
import { scanWal } from './wal-file.js';

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/** Files up to this size get a whole-file `PRAGMA quick_check` at open (about 0.3 s at 128 MiB). */
export const DEFAULT_FULL_CHECK_MAX_BYTES = 128 * 1024 * 1024;
/**
 * Without a WAL, files up to this size are checked from an in-memory copy, so that refusing one creates no
 * `-wal`/`-shm` next to it (a read-only SQLite connection would). Larger ones are read through a read-only
 * connection: the copy would cost twice the file in memory.
 */
const IN_MEMORY_CHECK_MAX_BYTES = 16 * 1024 * 1024;
/**
 * A check is remembered only for files last changed at least this long before it began: a later write must
 * get a different change time, which a coarse file-system clock cannot promise within one of its ticks.
 */
const SETTLED_NS = 2_000_000_000n;

export interface StoreFileCheckOptions {
  /**
   * `bounded` (at open): the structural checks, then `PRAGMA quick_check` of the whole file when it is at most
   * `fullCheckMaxBytes`, else of every table but `events` (whose pages are checked as they are read: any
   * corruption error stops the store). `full` (`doctor`, `verify`): `quick_check` of the whole file.
   */
  readonly integrity?: 'bounded' | 'full';
  readonly fullCheckMaxBytes?: number;
  /**
   * Default true. A passed check is remembered beside the file (`<db>.checked.json`: the identity of the file
   * and its WAL: device, inode, size, modification and change times in nanoseconds); a `bounded` check of
   * files that still have exactly that identity skips `quick_check` (the structural checks still run). A
   * `full` check always runs it. Damage is forgotten: a check that finds it removes the record.
   */
  readonly remember?: boolean;
}

/** What {@link checkStoreFile} found on a file it accepted. */
export interface StoreFileReport {
  readonly bytes: number;
  readonly pageSize: number;
  /** Pages in use, WAL included. */
  readonly pages: number;
  /** Committed WAL frames not yet checkpointed into the file. */
  readonly walFrames: number;
  /** `full`: every page was checked; `partial`: every table but `events`. */
  readonly integrity: 'full' | 'partial';
  readonly schemaVersion: number;
  readonly durationMs: number;
  /**
   * True when `quick_check` did not run: the files are unchanged since one passed at {@link checkedAt}
   * (only `bounded` checks; the structural checks ran).
   */
  readonly remembered: boolean;
  /** When the `quick_check` this report stands on ran (ISO time). */
  readonly checkedAt: string;
}

/**
 * Checks a store file without writing to it (nor checkpointing its WAL into it): the SQLite header, the page
 * count the header records against the file's size, the WAL's committed frames, the schema version, and
 * `PRAGMA quick_check`. Throws {@link DamagedStoreError} for damage, {@link CorruptDatabaseError} for a file that
 * is not a Demiurge database, {@link DatabaseNewerThanCodeError} for a newer schema. An absent or empty file
 * passes (it is created).
 *
 * @example
 * const report = checkStoreFile('/home/me/.demiurge/runtime/runtime.sqlite3', { integrity: 'full' });
 */
export function checkStoreFile(path: string, options: StoreFileCheckOptions = {}): StoreFileReport | undefined {
  try {
    try {
      return checkOnce(path, options);
    } catch (err) {
      if (!(err instanceof DamagedStoreError)) throw err;
      // Another process checkpointing or restarting the WAL between the reads of the size, the header and the
      // WAL can make a sound file look cut short for a moment: damage must be found twice.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
      return checkOnce(path, options);
    }
  } catch (err) {
    if (options.remember !== false && (err instanceof DamagedStoreError || err instanceof CorruptDatabaseError)) {
      forgetCheck(path);
    }
    throw err;
  }
}

function checkOnce(path: string, options: StoreFileCheckOptions): StoreFileReport | undefined {
  if (!existsSync(path)) return undefined;
  const started = performance.now();
  const startedNs = BigInt(Date.now()) * 1_000_000n;
  const remember = options.remember !== false;
  // Taken before any read: a write during the check changes it, and a changed identity is not remembered.
  const identity = remember ? storeIdentity(path) : undefined;
  const stat = statSync(path);
  if (!stat.isFile()) throw new CorruptDatabaseError(path, 'not a regular file');
  if (stat.size === 0) return undefined;
  const header = readHeader(path);
  if (!header.subarray(0, 16).equals(SQLITE_HEADER)) {
    throw new CorruptDatabaseError(path, 'not an SQLite file: its header is wrong');
  }
  const rawPageSize = header.readUInt16BE(16);
  const pageSize = rawPageSize === 1 ? 65536 : rawPageSize;
  if (pageSize < 512 || (pageSize & (pageSize - 1)) !== 0 || header[21] !== 64 || header[22] !== 32) {
    throw new DamagedStoreError(path, 'its SQLite header is garbled');
  }
  const wal = scanWal(path, pageSize);
  if (wal.damage) throw new DamagedStoreError(path, wal.damage);
  if (stat.size % pageSize !== 0) {
    throw new DamagedStoreError(path, `its size (${stat.size} bytes) is not a whole number of ${pageSize}-byte pages`);
  }
  const headerPages = header.readUInt32BE(28);
  const headerPagesValid = headerPages > 0 && header.readUInt32BE(92) === header.readUInt32BE(24);
  // With committed WAL frames the header may legitimately be ahead of the file (a checkpoint cut short by a
  // crash is finished from the WAL); SQLite's own check below then judges the pages.
  if (headerPagesValid && headerPages * pageSize > stat.size && wal.committedFrames === 0) {
    throw new DamagedStoreError(
      path,
      `its header counts ${headerPages} pages but the file holds ${stat.size / pageSize}: it was cut short`,
    );
  }
  const inMemory = wal.committedFrames === 0 && stat.size <= IN_MEMORY_CHECK_MAX_BYTES;
  const full = options.integrity === 'full' || stat.size <= (options.fullCheckMaxBytes ?? DEFAULT_FULL_CHECK_MAX_BYTES);
  const known = identity && options.integrity !== 'full' ? rememberedCheck(path, identity) : undefined;
  if (known && known.schemaVersion <= SCHEMA_VERSION && (known.integrity === 'full' || !full)) {
    return {
      bytes: stat.size,
      pageSize,
      pages: known.pages,
      walFrames: wal.committedFrames,
      integrity: known.integrity,
      schemaVersion: known.schemaVersion,
      durationMs: Math.round(performance.now() - started),
      remembered: true,
      checkedAt: known.checkedAt,
    };
  }
  const probe = () => sqliteCheck(path, inMemory, full);
  let facts: ReturnType<typeof sqliteCheck>;
  try {
    facts = probe();
  } catch (err) {
    // An in-memory copy read while another process began writing could be torn: judge the live file then.
    if (inMemory && scanWal(path, pageSize).bytes !== wal.bytes) facts = sqliteCheckOrThrow(path, false, full);
    else throw classify(path, err);
  }
  const report: StoreFileReport = {
    bytes: stat.size,
    pageSize,
    pages: facts.pages,
    walFrames: wal.committedFrames,
    integrity: full ? 'full' : 'partial',
    schemaVersion: facts.version,
    durationMs: Math.round(performance.now() - started),
    remembered: false,
    checkedAt: new Date(Number(startedNs / 1_000_000n)).toISOString(),
  };
  const after = identity ? storeIdentity(path) : undefined;
  if (identity && after && sameIdentity(identity, after) && settled(identity, startedNs)) {
    rememberCheck(path, {
      format: 1,
      files: identity,
      integrity: report.integrity,
      schemaVersion: report.schemaVersion,
      pages: report.pages,
      checkedAt: report.checkedAt,
      durationMs: report.durationMs,
    });
  }
  return report;
}

/** Were the files last changed at least {@link SETTLED_NS} before the check began? */
function settled(identity: NonNullable<ReturnType<typeof storeIdentity>>, startedNs: bigint): boolean {
  const changed = [identity.db, identity.wal].map((f) => (f ? BigInt(f.ctimeNs) : 0n));
  return changed.every((ns) => startedNs - ns >= SETTLED_NS);
}

/** Is this SQLite error one that says the file is damaged (a short read: the file was cut under us)? */
export function isCorruption(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return (
    typeof code === 'string' &&
    (code.startsWith('SQLITE_CORRUPT') || code.startsWith('SQLITE_NOTADB') || code === 'SQLITE_IOERR_SHORT_READ')
  );
}

function sqliteCheckOrThrow(path: string, inMemory: boolean, full: boolean): ReturnType<typeof sqliteCheck> {
  try {
    return sqliteCheck(path, inMemory, full);
  } catch (err) {
    throw classify(path, err);
  }
}

function classify(path: string, err: unknown): Error {
  if (err instanceof DamagedStoreError || err instanceof CorruptDatabaseError) return err;
  if (err instanceof DatabaseNewerThanCodeError) return err;
  const message = (err as Error).message;
  if (isCorruption(err)) return new DamagedStoreError(path, `SQLite reports: ${message}`, { cause: err });
  return new CorruptDatabaseError(path, message, { cause: err });
}

function sqliteCheck(path: string, inMemory: boolean, full: boolean): { version: number; pages: number } {
  const db = inMemory ? openCopy(path) : new Database(path, { readonly: true, fileMustExist: true });
  try {
    // A read-only connection cannot switch journal modes; it only needs to wait for a writer.
    db.pragma('busy_timeout = 5000');
    const version = db.pragma('user_version', { simple: true }) as number;
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map(
      (t) => t.name,
    );
    if (version > SCHEMA_VERSION) throw new DatabaseNewerThanCodeError(path, version, SCHEMA_VERSION);
    if (tables.length > 0 && !tables.includes('schema_migrations')) {
      throw new CorruptDatabaseError(
        path,
        `an SQLite database that Demiurge did not create (tables: ${tables.join(', ')})`,
      );
    }
    const targets = full ? [undefined] : tables.filter((t) => t !== 'events');
    for (const table of targets) {
      const sql =
        table === undefined ? 'PRAGMA quick_check(1)' : `PRAGMA quick_check("${table.replaceAll('"', '""')}")`;
      const result = db.prepare(sql).pluck().all() as string[];
      if (result[0] !== 'ok') {
        const found = result
          .join('\n')
          .replace(/\*\*\* in database \w+ \*\*\*/g, '')
          .split(/\s*\n\s*/)
          .filter((line) => line !== '');
        throw new DamagedStoreError(path, `SQLite's integrity check reports: ${found.slice(0, 3).join('; ')}`);
      }
    }
    return { version, pages: db.pragma('page_count', { simple: true }) as number };
  } finally {
    db.close();
  }
}

/** The main file alone (no WAL content to see), in memory, so that checking it creates no side files. */
function openCopy(path: string): Database.Database {
  const bytes = readFileSync(path);
  // A WAL-mode file cannot be deserialized; bytes 18-19 say which journal it uses.
  bytes[18] = 1;
  bytes[19] = 1;
  return new Database(bytes, { readonly: true });
}

function readHeader(path: string): Buffer {
  const header = Buffer.alloc(100);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, header, 0, 100, 0);
  } finally {
    closeSync(fd);
  }
  return header;
}
