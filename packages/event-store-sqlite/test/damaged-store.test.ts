import { createHash } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  existsSync,
  openSync,
  readFileSync,
  statSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { CorruptDatabaseError, DamagedStoreError } from '@demiurge/event-store';
import { counterProjector, testEventRegistry } from '@demiurge/event-store/testing';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { checkStoreFile, openSqliteEventStore, type SqliteEventStore } from '../src/index.js';
import { storeFileEachTest } from './temp-dir.js';

let path: string;
let dir: string;
storeFileEachTest((file, folder) => {
  path = file;
  dir = folder;
});

const open = (file = path, fullCheckMaxBytes?: number, onDamaged?: (error: DamagedStoreError) => void) =>
  openSqliteEventStore({
    path: file,
    registry: testEventRegistry,
    projectors: [counterProjector],
    ...(fullCheckMaxBytes === undefined ? {} : { fullCheckMaxBytes }),
    ...(onDamaged ? { onDamaged } : {}),
  });
const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const note = 'x'.repeat(300);

/** Appends `streams` streams of 20 events each, one commit per stream. */
async function fill(store: SqliteEventStore, streams: number): Promise<void> {
  for (let s = 0; s < streams; s++) {
    await store.append({
      streamType: 'counter',
      streamId: `c-${s}`,
      expectedVersion: 'no_stream',
      events: [
        { type: 'test.created', data: { name: `${note}${s}` } },
        ...Array.from({ length: 19 }, (_, i) => ({ type: 'test.incremented', data: { by: i } })),
      ],
    });
  }
}

async function validStore(streams = 40): Promise<void> {
  const store = await open();
  await fill(store, streams);
  await store.close();
}

function overwrite(file: string, offset: number, bytes: Buffer): void {
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, bytes, 0, bytes.length, offset);
  } finally {
    closeSync(fd);
  }
}

/** The page number of a leaf page of `table` (from SQLite's dbstat, on an in-memory copy: no side files). */
function leafPageOf(file: string, table: string): number {
  const bytes = readFileSync(file);
  bytes[18] = 1;
  bytes[19] = 1;
  const db = new Database(bytes, { readonly: true });
  try {
    const pages = db
      .prepare("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno")
      .pluck()
      .all(table) as number[];
    return pages[Math.floor(pages.length / 2)]!;
  } finally {
    db.close();
  }
}

async function refusal(file = path): Promise<unknown> {
  return open(file).then(
    async (store) => {
      await store.close();
      return undefined;
    },
    (err: unknown) => err,
  );
}

describe('a damaged store is refused at open and left byte-identical', () => {
  it('refuses a store whose last page was cut off, creating no -wal or -shm', async () => {
    await validStore();
    expect(existsSync(`${path}-wal`)).toBe(false);
    truncateSync(path, statSync(path).size - 4096);
    const before = sha(path);
    const err = await refusal();
    expect(err).toBeInstanceOf(DamagedStoreError);
    expect((err as Error).message).toMatch(
      /^damaged store \S+runtime\.sqlite3: its header counts (\d+) pages but the file holds \d+: it was cut short\. Nothing was written to it$/,
    );
    expect(sha(path)).toBe(before);
    expect([existsSync(`${path}-wal`), existsSync(`${path}-shm`)]).toEqual([false, false]);
  });

  it('refuses a file cut in the middle of a page', async () => {
    await validStore();
    truncateSync(path, statSync(path).size - 100);
    const before = sha(path);
    expect(await refusal()).toMatchObject({ name: 'DamagedStoreError', detail: expect.stringMatching(/whole number/) });
    expect(sha(path)).toBe(before);
  });

  for (const table of ['events', 'projection_documents']) {
    it(`refuses a store with an overwritten page in the middle (${table}), creating no side files`, async () => {
      await validStore();
      const page = leafPageOf(path, table);
      overwrite(path, (page - 1) * 4096, Buffer.alloc(4096, 0xab));
      const before = sha(path);
      const err = await refusal();
      expect(err).toBeInstanceOf(DamagedStoreError);
      expect((err as Error).message).toMatch(/^damaged store \S+: SQLite's integrity check reports: /);
      expect(sha(path)).toBe(before);
      expect([existsSync(`${path}-wal`), existsSync(`${path}-shm`)]).toEqual([false, false]);
    });
  }

  it('still refuses a zeroed header as not an SQLite file', async () => {
    await validStore();
    overwrite(path, 0, Buffer.alloc(100));
    const before = sha(path);
    const err = await refusal();
    expect(err).toBeInstanceOf(CorruptDatabaseError);
    expect((err as Error).message).toMatch(
      /is not a usable Demiurge database \(not an SQLite file: its header is wrong\)/,
    );
    expect(sha(path)).toBe(before);
  });

  it('a full check finds a damaged events page that the bounded check at open leaves to fail-stop', async () => {
    await validStore(120);
    const page = leafPageOf(path, 'events');
    overwrite(path, (page - 1) * 4096 + 8, Buffer.alloc(4088, 0xab));
    expect(checkStoreFile(path, { integrity: 'bounded', fullCheckMaxBytes: 0 })).toMatchObject({
      integrity: 'partial',
    });
    expect(() => checkStoreFile(path, { integrity: 'full' })).toThrow(DamagedStoreError);
  });
});

describe('a store with a WAL is checked without checkpointing it', () => {
  /** A crash image: the main file and its -wal copied while the writer still has them open. */
  async function crashImage(): Promise<string> {
    const store = await open();
    await fill(store, 30);
    const copy = join(dir, 'image.sqlite3');
    copyFileSync(path, copy);
    copyFileSync(`${path}-wal`, `${copy}-wal`);
    await store.close();
    return copy;
  }

  it('opens an intact crash image and finds every committed event', async () => {
    const copy = await crashImage();
    const store = await open(copy);
    expect(await store.head()).toBe(600);
    await store.close();
  });

  it('a torn last transaction (a crash while it was written) is not damage: SQLite drops it', async () => {
    const copy = await crashImage();
    const walBytes = statSync(`${copy}-wal`).size;
    const frames = Math.floor((walBytes - 32) / (24 + 4096));
    overwrite(`${copy}-wal`, 32 + (frames - 1) * (24 + 4096) + 24 + 100, Buffer.alloc(64, 0xab));
    const store = await open(copy);
    expect(await store.head()).toBe(580);
    expect(await store.verifyChain()).toMatchObject({ ok: true, eventsChecked: 580 });
    await store.close();
  });

  it('refuses a damaged page of the main file under a WAL with committed frames, checkpointing nothing', async () => {
    await validStore(60);
    const store = await open();
    await store.append({
      streamType: 'counter',
      streamId: 'late',
      expectedVersion: 'no_stream',
      events: [{ type: 'test.created', data: { name: 'late' } }],
    });
    const copy = join(dir, 'image.sqlite3');
    copyFileSync(path, copy);
    copyFileSync(`${path}-wal`, `${copy}-wal`);
    await store.close();
    overwrite(copy, (leafPageOf(copy, 'events') - 1) * 4096 + 8, Buffer.alloc(2000, 0xab));
    const [main, wal] = [sha(copy), sha(`${copy}-wal`)];
    const err = await refusal(copy);
    expect(err).toBeInstanceOf(DamagedStoreError);
    expect((err as Error).message).toMatch(/SQLite's integrity check reports: /);
    expect([sha(copy), sha(`${copy}-wal`)]).toEqual([main, wal]);
  });

  it('refuses a WAL with a damaged frame before later commits, leaving both files as they were', async () => {
    const copy = await crashImage();
    const walBytes = statSync(`${copy}-wal`).size;
    const frames = Math.floor((walBytes - 32) / (24 + 4096));
    expect(frames).toBeGreaterThan(10);
    // the page image of a frame in the middle of the committed frames
    overwrite(`${copy}-wal`, 32 + Math.floor(frames / 3) * (24 + 4096) + 24 + 100, Buffer.alloc(64, 0xab));
    const [main, wal] = [sha(copy), sha(`${copy}-wal`)];
    const err = await refusal(copy);
    expect(err).toBeInstanceOf(DamagedStoreError);
    expect((err as Error).message).toMatch(/WAL frame \d+ is damaged and \d+ committed transactions follow it/);
    expect([sha(copy), sha(`${copy}-wal`)]).toEqual([main, wal]);
  });
});

describe('corruption met after open stops the store (fail-stop)', () => {
  it('every later call gets DamagedStoreError, nothing is appended, and close leaves the file as it was', async () => {
    await validStore(120);
    const page = leafPageOf(path, 'events');
    overwrite(path, (page - 1) * 4096 + 8, Buffer.alloc(4088, 0xab));
    const before = sha(path);
    // a check bounded below the file's size skips the events table: the damage is met on reading
    const told: DamagedStoreError[] = [];
    const store = await open(path, 0, (error) => told.push(error));
    // committed before the damage is met: it sits in the WAL, which close must not checkpoint into the file
    await store.append({
      streamType: 'counter',
      streamId: 'early',
      expectedVersion: 'no_stream',
      events: [{ type: 'test.created', data: { name: 'early' } }],
    });
    const headBefore = await store.head();
    const read = await store.readAll().catch((e: unknown) => e);
    expect(read).toBeInstanceOf(DamagedStoreError);
    expect((read as Error).message).toMatch(
      /^damaged store \S+: SQLite reported ".+" while the store was in use; the store stopped and accepts no more writes$/,
    );
    const append = await store
      .append({
        streamType: 'counter',
        streamId: 'late',
        expectedVersion: 'no_stream',
        events: [{ type: 'test.created', data: { name: 'late' } }],
      })
      .catch((e: unknown) => e);
    expect(append).toBe(read);
    await expect(store.head()).rejects.toBe(read);
    await expect(store.projection('counter').get('totals', 'all')).rejects.toBe(read);
    // whoever opened it (a host) is told once, with the same error, so it can stop
    expect(told).toEqual([read]);
    await store.close();
    expect(sha(path)).toBe(before);
    expect(statSync(`${path}-wal`).size).toBeGreaterThan(0);
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare('SELECT MAX(position) FROM events').pluck().get()).toBe(headBefore);
    raw.close();
  });
});
