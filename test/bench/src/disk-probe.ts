import { join } from 'node:path';
import { openRaw } from './raw-db.js';
import { withTempDir } from './temp-dir.js';

/**
 * What one `synchronous=FULL` commit costs on this machine's disk at this moment, in µs: the median of
 * `commits` transactions that each change one row of a one-row table (the store's pragmas, `openRaw`), so
 * nearly all of it is the WAL's fsync. Each commit writes a new value: SQLite writes no page for a row set to
 * the value it holds, so a probe that rewrote one value would time commits that write nothing.
 *
 * Every FULL row of the bench is a ratio against a raw loop run in the same minutes, but how much of either side
 * is fsync moves with this figure (on the development machine it went from about 250 µs to 1,000 µs and back
 * within a day): a ratio of a side with more CPU per commit than the other rises as the disk slows. The bench
 * reports it at the start and at the end of the SQLite rows so that a run can be read with it.
 */
export async function probeCommitMicros(commits = 200): Promise<number> {
  return withTempDir('disk-probe', async (dir) => {
    const db = openRaw(join(dir, 'probe.sqlite3'), 'FULL');
    try {
      db.exec("CREATE TABLE probe (id INTEGER PRIMARY KEY, v TEXT NOT NULL); INSERT INTO probe VALUES (1, '')");
      const begin = db.prepare('BEGIN IMMEDIATE');
      const update = db.prepare('UPDATE probe SET v = ? WHERE id = 1');
      const commit = db.prepare('COMMIT');
      const times: number[] = [];
      for (let i = 0; i < commits; i++) {
        const started = performance.now();
        begin.run();
        update.run(`v${i}`);
        commit.run();
        times.push(performance.now() - started);
      }
      times.sort((a, b) => a - b);
      return Math.round(times[Math.floor(times.length / 2)]! * 1000);
    } finally {
      db.close();
    }
  });
}
