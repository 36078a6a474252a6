import { closeSync, existsSync, openSync, readFileSync, statSync, utimesSync, writeSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demiurge, demiurgeJson, type tempHome } from './cli.js';
import { cliHome, copyHome, databaseOf, middleLeafPage, sha256, sideFiles } from './store-copies.js';

/**
 * The store's integrity check at open is remembered for files that did not change: a second `status` on an
 * unchanged home does not run `quick_check` (its `--json` says so), a touched or written file is checked again,
 * and damage is still refused with the one-line message, the file byte-identical and no side files created.
 */
interface StoreCheck {
  readonly quickCheck: 'ran' | 'remembered';
  readonly integrity: string;
  readonly checkedAt: string;
}

let base: ReturnType<typeof tempHome>;
beforeAll(async () => {
  base = await cliHome();
}, 60_000);
afterAll(() => base.remove());

/** Files changed less than 2 s before a check are not remembered (a coarse file-system clock). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 2100));
/** The database's change time now, and the one its remembered check was recorded for (undefined: none). */
const changeTime = (db: string) => String(statSync(db, { bigint: true }).ctimeNs);
const recordedChangeTime = (db: string): string | undefined => {
  if (!existsSync(`${db}.checked.json`)) return undefined;
  const record: { files?: { db?: { ctimeNs?: string } } } = JSON.parse(readFileSync(`${db}.checked.json`, 'utf8'));
  return record.files?.db?.ctimeNs;
};
const storeCheck = async (home: string) =>
  (await demiurgeJson<{ storeCheck: StoreCheck }>(['status', '--home', home])).json.storeCheck;

describe('status remembers a passed integrity check of unchanged files (real CLI)', () => {
  it('the second status skips quick_check; a touched file and a write make the next one run it', async () => {
    const home = copyHome(base.path);
    try {
      const db = databaseOf(home.path);
      await settle();
      const first = await storeCheck(home.path);
      expect(first).toMatchObject({ quickCheck: 'ran', integrity: 'full' });
      expect(existsSync(`${db}.checked.json`)).toBe(true);
      const before = sha256(db);
      const second = await storeCheck(home.path);
      expect(second).toEqual({ ...first, quickCheck: 'remembered', durationMs: expect.any(Number) });
      expect(sha256(db)).toBe(before);
      expect(sideFiles(db)).toEqual([false, false]);
      // The same modification time, but the change time moved: checked again.
      const { atime, mtime } = statSync(db);
      utimesSync(db, atime, mtime);
      expect(await storeCheck(home.path)).toMatchObject({ quickCheck: 'ran' });
      // That check is remembered only if the change was 2 s old when it began: on a loaded machine the CLI can
      // take that long to start. The record beside the file says which; the next check follows it.
      const rememberedNow = recordedChangeTime(db) === changeTime(db);
      await settle();
      expect(await storeCheck(home.path)).toMatchObject({ quickCheck: rememberedNow ? 'remembered' : 'ran' });
      expect(await storeCheck(home.path)).toMatchObject({ quickCheck: 'remembered' });
      expect((await demiurge(['run', 'one more', '--home', home.path])).code).toBe(0);
      expect(await storeCheck(home.path)).toMatchObject({ quickCheck: 'ran' });
    } finally {
      home.remove();
    }
  }, 120_000);

  it('a page overwritten after a remembered check is refused by status, the file left byte-identical', async () => {
    const home = copyHome(base.path);
    try {
      const db = databaseOf(home.path);
      await settle();
      await storeCheck(home.path);
      expect(await storeCheck(home.path)).toMatchObject({ quickCheck: 'remembered' });
      const fd = openSync(db, 'r+');
      writeSync(fd, Buffer.alloc(4096, 0xab), 0, 4096, (middleLeafPage(db, 'events') - 1) * 4096);
      closeSync(fd);
      const before = sha256(db);
      const run = await demiurge(['status', '--home', home.path]);
      expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 1, stdout: '' });
      expect(run.stderr).toMatch(
        new RegExp(
          `^demiurge: damaged store ${db.replaceAll('/', '\\/')}: SQLite's integrity check reports: [^\\n]+\\. Nothing was written to it; run "demiurge doctor" for a full check\\n$`,
        ),
      );
      expect(sha256(db)).toBe(before);
      expect(sideFiles(db)).toEqual([false, false]);
      expect(existsSync(`${db}.checked.json`)).toBe(false);
    } finally {
      home.remove();
    }
  }, 120_000);
});
