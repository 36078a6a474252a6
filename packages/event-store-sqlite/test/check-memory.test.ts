import { closeSync, existsSync, openSync, readFileSync, statSync, utimesSync, writeFileSync, writeSync } from 'node:fs';

import { DamagedStoreError } from '@demiurge/event-store';
import { counterProjector, testEventRegistry } from '@demiurge/event-store/testing';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { checkStoreFile, openSqliteEventStore, type StoreFileReport } from '../src/index.js';
import { storeFileEachTest } from './temp-dir.js';

// A passed check is remembered beside the file (`<db>.checked.json`) with the identity of the file and its
// WAL; a bounded check of unchanged files skips `quick_check`. Files changed less than 2 s before a check are
// not remembered (a coarse file-system clock could give a later write the same change time), hence the waits.

let path: string;
storeFileEachTest((file) => {
  path = file;
});

const record = () => `${path}.checked.json`;
const settle = () => new Promise((resolve) => setTimeout(resolve, 2100));

async function validStore(): Promise<void> {
  const store = await openSqliteEventStore({ path, registry: testEventRegistry, projectors: [counterProjector] });
  for (let s = 0; s < 40; s++) {
    await store.append({
      streamType: 'counter',
      streamId: `c-${s}`,
      expectedVersion: 'no_stream',
      events: Array.from({ length: 20 }, (_, i) =>
        i === 0
          ? { type: 'test.created', data: { name: `${'x'.repeat(300)}${s}` } }
          : { type: 'test.incremented', data: { by: i } },
      ),
    });
  }
  await store.close();
}

function overwriteEventsPage(): void {
  const bytes = readFileSync(path);
  bytes[18] = 1;
  bytes[19] = 1;
  const db = new Database(bytes, { readonly: true });
  const pages = db
    .prepare("SELECT pageno FROM dbstat WHERE name = 'events' AND pagetype = 'leaf' ORDER BY pageno")
    .pluck()
    .all() as number[];
  db.close();
  const fd = openSync(path, 'r+');
  writeSync(fd, Buffer.alloc(4000, 0xab), 0, 4000, (pages[Math.floor(pages.length / 2)]! - 1) * 4096 + 8);
  closeSync(fd);
}

const bounded = () => checkStoreFile(path, { integrity: 'bounded' }) as StoreFileReport;

describe('a passed integrity check is remembered for unchanged files', () => {
  it('the next bounded check of the same files skips quick_check; a full check always runs it', async () => {
    await validStore();
    await settle();
    const first = bounded();
    expect(first).toMatchObject({ remembered: false, integrity: 'full' });
    expect(JSON.parse(readFileSync(record(), 'utf8'))).toMatchObject({ format: 1, checkedAt: first.checkedAt });
    expect(bounded()).toMatchObject({ remembered: true, integrity: 'full', checkedAt: first.checkedAt });
    expect(checkStoreFile(path, { integrity: 'full' })).toMatchObject({ remembered: false });
    expect(checkStoreFile(path, { integrity: 'bounded', remember: false })).toMatchObject({ remembered: false });
  }, 20_000);

  it('a file whose change time moved (touched, or written) is checked again, and its damage found', async () => {
    await validStore();
    await settle();
    const first = bounded();
    // Same modification time, but the change time moves: still checked again.
    const { atime, mtime } = statSync(path);
    utimesSync(path, atime, mtime);
    expect(bounded()).toMatchObject({ remembered: false });
    overwriteEventsPage();
    expect(() => bounded()).toThrow(DamagedStoreError);
    expect(existsSync(record())).toBe(false);
    expect(first.remembered).toBe(false);
  }, 20_000);

  it('a file changed less than 2 s before the check is not remembered', async () => {
    await validStore();
    expect(bounded()).toMatchObject({ remembered: false });
    expect(existsSync(record())).toBe(false);
    expect(bounded()).toMatchObject({ remembered: false });
  });

  it('damage that changed no metadata is skipped by a bounded check, found by a full one, which forgets the record', async () => {
    await validStore();
    overwriteEventsPage();
    await settle();
    // Stands for a failing disk: the record claims a passed check for exactly these (damaged) files.
    const identity = (p: string) => {
      const s = statSync(p, { bigint: true });
      return { dev: `${s.dev}`, ino: `${s.ino}`, size: `${s.size}`, mtimeNs: `${s.mtimeNs}`, ctimeNs: `${s.ctimeNs}` };
    };
    const checkedAt = new Date().toISOString();
    writeFileSync(
      record(),
      JSON.stringify({
        format: 1,
        files: { db: identity(path), wal: null },
        integrity: 'full',
        schemaVersion: 2,
        pages: 1,
        checkedAt,
        durationMs: 1,
      }),
    );
    expect(bounded()).toMatchObject({ remembered: true, checkedAt });
    expect(() => checkStoreFile(path, { integrity: 'full' })).toThrow(DamagedStoreError);
    expect(existsSync(record())).toBe(false);
    expect(() => bounded()).toThrow(DamagedStoreError);
  }, 20_000);

  it('a record of other files (a copy, a restored backup) or an unreadable one is not used', async () => {
    await validStore();
    await settle();
    bounded();
    writeFileSync(record(), '{"format":1,"files":');
    expect(bounded()).toMatchObject({ remembered: false });
    expect(bounded()).toMatchObject({ remembered: true });
    const stored = JSON.parse(readFileSync(record(), 'utf8'));
    writeFileSync(
      record(),
      JSON.stringify({ ...stored, files: { ...stored.files, db: { ...stored.files.db, ino: '1' } } }),
    );
    expect(bounded()).toMatchObject({ remembered: false });
  }, 20_000);
});
