import { type BigIntStats, existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';

// The memory of a passed integrity check: `<db>.checked.json` beside the database (never inside it, so that
// remembering writes nothing to the store), holding the identity of the database and of its WAL when the check
// passed. A later open whose files have exactly that identity need not run `PRAGMA quick_check` again.

/** What the kernel says of a file: a write, a truncate, a replace or `touch` changes it (ctime cannot be set). */
export interface FileIdentity {
  readonly dev: string;
  readonly ino: string;
  readonly size: string;
  readonly mtimeNs: string;
  readonly ctimeNs: string;
}

/** The database's identity and its WAL's (null: there was none, or it was empty). */
export interface StoreIdentity {
  readonly db: FileIdentity;
  readonly wal: FileIdentity | null;
}

export interface CheckRecord {
  readonly format: 1;
  readonly files: StoreIdentity;
  readonly integrity: 'full' | 'partial';
  readonly schemaVersion: number;
  readonly pages: number;
  readonly checkedAt: string;
  readonly durationMs: number;
}

/** Where the check of `dbPath` is remembered. */
export const checkRecordPath = (dbPath: string) => `${dbPath}.checked.json`;

function identityOf(path: string): FileIdentity | null {
  let stat: BigIntStats;
  try {
    stat = statSync(path, { bigint: true });
  } catch {
    return null;
  }
  return {
    dev: String(stat.dev),
    ino: String(stat.ino),
    size: String(stat.size),
    mtimeNs: String(stat.mtimeNs),
    ctimeNs: String(stat.ctimeNs),
  };
}

/** The current identity of the database and its WAL; undefined when the database is gone. */
export function storeIdentity(dbPath: string): StoreIdentity | undefined {
  const db = identityOf(dbPath);
  if (!db) return undefined;
  // An empty WAL holds nothing: a read-only connection (the check's own) creates one and leaves it.
  const wal = identityOf(`${dbPath}-wal`);
  return { db, wal: wal && wal.size !== '0' ? wal : null };
}

const sameFile = (a: FileIdentity | null, b: FileIdentity | null) =>
  a === b ||
  (a !== null &&
    b !== null &&
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.size === b.size &&
    a.mtimeNs === b.mtimeNs &&
    a.ctimeNs === b.ctimeNs);

export const sameIdentity = (a: StoreIdentity, b: StoreIdentity) => sameFile(a.db, b.db) && sameFile(a.wal, b.wal);

/** The remembered check of `dbPath` when its files still have the identity it held for, else undefined. */
export function rememberedCheck(dbPath: string, now: StoreIdentity): CheckRecord | undefined {
  const path = checkRecordPath(dbPath);
  if (!existsSync(path)) return undefined;
  try {
    const record = JSON.parse(readFileSync(path, 'utf8')) as CheckRecord;
    return record.format === 1 && record.files && sameIdentity(record.files, now) ? record : undefined;
  } catch {
    return undefined; // unreadable or torn: check again
  }
}

/**
 * Remembers a passed check (write to a temporary file, then rename, so a reader never sees half of it).
 * Best effort: a home whose folder cannot be written still opens, it is just checked every time.
 */
export function rememberCheck(dbPath: string, record: CheckRecord): void {
  const path = checkRecordPath(dbPath);
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, `${JSON.stringify(record)}\n`);
    renameSync(tmp, path);
  } catch {
    rmSync(tmp, { force: true });
  }
}

/** Forgets the remembered check (damage was found): the next open checks the file again. */
export function forgetCheck(dbPath: string): void {
  try {
    rmSync(checkRecordPath(dbPath), { force: true });
  } catch {
    // nothing to forget, or a folder we cannot write: the identity no longer matches anyway
  }
}
