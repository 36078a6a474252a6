import { readFileSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';

/** One WAL frame: the page it carries, and whether it ends a commit (the database size after it, else 0). */
export interface WalFrame {
  readonly page: number;
  readonly commit: boolean;
}

const WAL_HEADER = 32;
const FRAME_HEADER = 24;

/** Where the next frame of `path`'s WAL will be written (its size now). */
export function walEnd(path: string): number {
  return statSync(`${path}-wal`).size;
}

/**
 * The frames written to `path`'s WAL at or after byte `from` (a {@link walEnd}), read from the file's frame
 * headers. Valid only while no checkpoint restarted the WAL in between: callers check the commit count.
 */
export function walFramesSince(path: string, from: number, pageSize: number): WalFrame[] {
  const wal = readFileSync(`${path}-wal`);
  const frameSize = FRAME_HEADER + pageSize;
  if ((from - WAL_HEADER) % frameSize !== 0) throw new Error(`offset ${from} is not a frame boundary`);
  const frames: WalFrame[] = [];
  for (let at = from; at + frameSize <= wal.length; at += frameSize) {
    frames.push({ page: wal.readUInt32BE(at), commit: wal.readUInt32BE(at + 4) > 0 });
  }
  return frames;
}

/**
 * Which b-tree owns each page (`events:leaf`, `events_type_position:internal`, ...) through SQLite's `dbstat`,
 * read on a connection of its own (it sees the WAL). Page 1 is the file's header page (and the schema's root).
 */
export function pageOwners(path: string): { pageSize: number; owner(page: number): string } {
  const db = new Database(path, { readonly: true });
  try {
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const rows = db.prepare('SELECT name, pageno, pagetype FROM dbstat').all() as {
      name: string;
      pageno: number;
      pagetype: string;
    }[];
    const owners = new Map(rows.map((r) => [r.pageno, `${r.name}:${r.pagetype}`]));
    return { pageSize, owner: (page) => (page === 1 ? 'header' : (owners.get(page) ?? 'free')) };
  } finally {
    db.close();
  }
}

/** Frames per commit, by owner: `{ total, commits, byOwner: { 'events:leaf': 1, ... } }`. */
export function framesPerCommit(
  frames: readonly WalFrame[],
  owner: (page: number) => string,
): { total: number; commits: number; byOwner: Record<string, number> } {
  const commits = frames.filter((f) => f.commit).length;
  const byOwner: Record<string, number> = {};
  for (const f of frames) byOwner[owner(f.page)] = (byOwner[owner(f.page)] ?? 0) + 1;
  for (const key of Object.keys(byOwner)) byOwner[key] = byOwner[key]! / commits;
  return { total: frames.length / commits, commits, byOwner };
}
