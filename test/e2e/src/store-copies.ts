import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { demiurge, tempHome } from './cli.js';

/** A home made by the real CLI: `init`, then two turns through `run` (the fake provider). */
export async function cliHome(): Promise<ReturnType<typeof tempHome>> {
  const home = tempHome();
  for (const args of [['init'], ['run', 'hello there'], ['run', 'and again']]) {
    const run = await demiurge([...args, '--home', home.path]);
    if (run.code !== 0) throw new Error(`demiurge ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  }
  return home;
}

/** A copy of a whole home (config and runtime dir) in a new temp dir. */
export function copyHome(from: string): ReturnType<typeof tempHome> {
  const home = tempHome();
  cpSync(from, home.path, { recursive: true });
  return home;
}

export const databaseOf = (home: string) => join(home, 'runtime', 'runtime.sqlite3');

export const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

export const sideFiles = (file: string) => [existsSync(`${file}-wal`), existsSync(`${file}-shm`)];

/** Opens an in-memory copy of the file (so that looking creates no `-wal`/`-shm` next to it). */
export function inMemory(file: string): Database.Database {
  const bytes = readFileSync(file);
  bytes[18] = 1;
  bytes[19] = 1;
  return new Database(bytes);
}

/** A leaf page of `table` from the middle of its pages (SQLite's dbstat). */
export function middleLeafPage(file: string, table: string): number {
  const db = inMemory(file);
  try {
    const pages = db
      .prepare("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno")
      .pluck()
      .all(table) as number[];
    if (pages.length === 0) throw new Error(`no leaf page of ${table}`);
    return pages[Math.floor(pages.length / 2)]!;
  } finally {
    db.close();
  }
}

/** Runs `sql` on the events table behind the store: drop its triggers, change, recreate them. */
export function editBehindTheTriggers(file: string, sql: string): void {
  const raw = new Database(file);
  try {
    const triggers = raw
      .prepare("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'events'")
      .pluck()
      .all() as string[];
    if (triggers.length !== 2) throw new Error(`expected the two append-only triggers, found ${triggers.length}`);
    raw.exec('DROP TRIGGER events_refuse_update; DROP TRIGGER events_refuse_delete');
    const changed = raw.prepare(sql).run().changes;
    if (changed === 0) throw new Error('the edit changed no row');
    for (const t of triggers) raw.exec(t);
  } finally {
    raw.close();
  }
}
