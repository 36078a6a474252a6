import { closeSync, copyFileSync, openSync, statSync, truncateSync, writeSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demiurge, spawnDemiurge, type tempHome } from './cli.js';
import { cliHome, copyHome, databaseOf, middleLeafPage, sha256, sideFiles } from './store-copies.js';

let base: ReturnType<typeof tempHome>;
beforeAll(async () => {
  base = await cliHome();
}, 60_000);
afterAll(() => base.remove());

function overwrite(file: string, offset: number, bytes: Buffer): void {
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, bytes, 0, bytes.length, offset);
  } finally {
    closeSync(fd);
  }
}

const damages: readonly [string, (db: string) => void, RegExp][] = [
  [
    'its last page cut off',
    (db) => truncateSync(db, statSync(db).size - 4096),
    /its header counts \d+ pages but the file holds \d+: it was cut short/,
  ],
  [
    'a page of events in the middle overwritten',
    (db) => overwrite(db, (middleLeafPage(db, 'events') - 1) * 4096, Buffer.alloc(4096, 0xab)),
    /SQLite's integrity check reports: [^\n]+/,
  ],
  [
    'a page of projections in the middle overwritten',
    (db) => overwrite(db, (middleLeafPage(db, 'projection_documents') - 1) * 4096 + 8, Buffer.alloc(1000, 0xab)),
    /SQLite's integrity check reports: [^\n]+/,
  ],
];

const commands = [
  ['status'],
  ['events'],
  ['sessions', 'list'],
  ['run', 'write to it'],
  ['verify'],
  ['verify', '--head'],
];

describe('a damaged store is refused by every command and left byte-identical (real CLI)', () => {
  for (const [what, damage, detail] of damages) {
    it(`a copy of a real store with ${what}`, async () => {
      const home = copyHome(base.path);
      try {
        const db = databaseOf(home.path);
        damage(db);
        const before = sha256(db);
        for (const args of commands) {
          const run = await demiurge([...args, '--home', home.path]);
          expect({ args, code: run.code, stdout: run.stdout }).toEqual({ args, code: 1, stdout: '' });
          // one line naming the file and doctor, no stack
          expect(run.stderr).toMatch(
            new RegExp(
              `^demiurge: damaged store ${db.replaceAll('/', '\\/')}: ${detail.source}\\. Nothing was written to it; run "demiurge doctor" for a full check\\n$`,
            ),
          );
          expect(sha256(db)).toBe(before);
          expect(sideFiles(db)).toEqual([false, false]);
        }
        const doctor = await demiurge(['doctor', '--home', home.path]);
        expect(doctor.code).toBe(1);
        expect(doctor.stdout).toMatch(
          new RegExp(
            `^fail {2}integrity +damaged store ${db.replaceAll('/', '\\/')}: ${detail.source}\\. Nothing was written to it; every command refuses it: move it aside and restore a backup$`,
            'm',
          ),
        );
        expect(doctor.stdout).toMatch(/^doctor: 1 failure\(s\)/m);
        expect(sha256(db)).toBe(before);
      } finally {
        home.remove();
      }
    }, 120_000);
  }

  it('a crash image whose WAL has a damaged frame before later commits: refused, neither file changed', async () => {
    const live = copyHome(base.path);
    const image = copyHome(base.path);
    try {
      // A follower keeps the store open, so the two runs' commits stay in the WAL (no checkpoint on their close).
      const follow = spawnDemiurge(['events', '--follow', '--home', live.path]);
      await follow.lines(1);
      for (const text of ['one more', 'and another']) {
        expect((await demiurge(['run', text, '--home', live.path])).code).toBe(0);
      }
      const db = databaseOf(image.path);
      copyFileSync(databaseOf(live.path), db);
      copyFileSync(`${databaseOf(live.path)}-wal`, `${db}-wal`);
      follow.child.kill('SIGTERM');
      await follow.exited;
      // the intact image opens: its WAL's commits are found
      const intact = copyHome(image.path);
      try {
        const events = await demiurge(['events', '--type', 'turn.model_responded', '--home', intact.path]);
        expect(events.code).toBe(0);
        expect(events.stdout.match(/ turn\.model_responded /g)).toHaveLength(4);
      } finally {
        intact.remove();
      }
      const frames = Math.floor((statSync(`${db}-wal`).size - 32) / (24 + 4096));
      expect(frames).toBeGreaterThan(10);
      overwrite(`${db}-wal`, 32 + Math.floor(frames / 3) * (24 + 4096) + 24 + 200, Buffer.alloc(64, 0xab));
      const [main, wal] = [sha256(db), sha256(`${db}-wal`)];
      for (const args of [['status'], ['run', 'write to it'], ['verify']]) {
        const run = await demiurge([...args, '--home', image.path]);
        expect(run.code).toBe(1);
        expect(run.stderr).toMatch(
          /^demiurge: damaged store \S+: WAL frame \d+ is damaged and \d+ committed transactions follow it\. Nothing was written to it; run "demiurge doctor" for a full check\n$/,
        );
      }
      expect([sha256(db), sha256(`${db}-wal`)]).toEqual([main, wal]);
    } finally {
      live.remove();
      image.remove();
    }
  }, 120_000);

  it('a zeroed header is still refused as not an SQLite file', async () => {
    const home = copyHome(base.path);
    try {
      const db = databaseOf(home.path);
      overwrite(db, 0, Buffer.alloc(100));
      const before = sha256(db);
      for (const args of [['status'], ['run', 'write to it']]) {
        const run = await demiurge([...args, '--home', home.path]);
        expect(run.code).toBe(1);
        expect(run.stderr).toMatch(
          /^demiurge: \S+ is not a usable Demiurge database \(not an SQLite file: its header is wrong\)/,
        );
      }
      expect(sha256(db)).toBe(before);
    } finally {
      home.remove();
    }
  }, 60_000);

  it('doctor reports an intact store as passing the integrity check', async () => {
    const doctor = await demiurge(['doctor', '--home', base.path]);
    expect(doctor.stdout).toMatch(/^ok {4}integrity +\d+ page\(s\) of 4096 bytes pass quick_check \(\d+ ms\)$/m);
  });
});
