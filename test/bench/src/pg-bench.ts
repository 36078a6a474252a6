import { loadavg } from 'node:os';
import { startTestPostgres, type TestPostgres } from '@demiurge/event-store-postgres/testing';
import { benchPgSequentialAppends } from './pg-append-bench.js';
import { benchPgVersusPgBoss } from './pg-boss-bench.js';
import { benchPgClaimSucceed } from './pg-work-bench.js';
import { type BenchResult, compared } from './results.js';

const APPEND_TARGET = 0.6;
/** The SQLite row's target for one worker against its raw loop. */
const WORK_TARGET = 0.5;
/** "Ahead of pg-boss": more items per second than pg-boss, same run, same database. */
const PG_BOSS_TARGET = 1;
const WORKERS = 8;

interface PgSizes {
  readonly appends: number;
  readonly streams: number;
  readonly workItems: number;
  readonly workItemsConcurrent: number;
}

const SIZES: Record<'full' | 'small', PgSizes> = {
  full: { appends: 5_000, streams: 1_000, workItems: 1_000, workItemsConcurrent: 2_000 },
  small: { appends: 600, streams: 100, workItems: 200, workItemsConcurrent: 400 },
};

const ROWS = {
  append: 'PostgreSQL append sequential (1 projector) vs raw pg',
  work: 'PostgreSQL work items claim+succeed, 1 worker vs raw pg',
  boss: `PostgreSQL work items claim+succeed, ${WORKERS} workers vs pg-boss 12`,
} as const;

/**
 * The PostgreSQL rows: one server for all of them (`startTestPostgres`: embedded, or `DEMIURGE_TEST_PG_URL`),
 * each comparison in the same run on that server. When no server can be started the rows say "not measured"
 * and are not met (in CI the failure is thrown instead).
 */
export async function benchPostgres(size: 'full' | 'small', log: (line: string) => void): Promise<BenchResult[]> {
  const sizes = SIZES[size];
  let server: TestPostgres;
  try {
    server = await startTestPostgres();
  } catch (err) {
    if (process.env.CI) throw err;
    log(`  PostgreSQL could not start here: ${(err as Error).message}`);
    return Object.values(ROWS).map((name) => ({
      name: `${name} (not measured: no PostgreSQL)`,
      value: 0,
      unit: 'ops/s',
      met: false,
    }));
  }
  const load = () =>
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`;
  log(`PostgreSQL ${server.embedded ? 'embedded (fsync=off)' : 'at DEMIURGE_TEST_PG_URL'}: ${load()}`);
  try {
    const results: BenchResult[] = [];
    log(`PostgreSQL sequential appends: ${sizes.appends} per side over ${sizes.streams} streams`);
    const a = await benchPgSequentialAppends(
      await server.createDatabase(),
      await server.createDatabase(),
      sizes.appends,
      sizes.streams,
    );
    log(`  store ${Math.round(a.store)} appends/s, raw pg ${Math.round(a.raw)} appends/s (${load()})`);
    results.push(compared(ROWS.append, 'appends/s', a.store, a.raw, APPEND_TARGET));

    log(`PostgreSQL claim then succeed, one worker: ${sizes.workItems} per side`);
    const w = await benchPgClaimSucceed(await server.createDatabase(), sizes.workItems);
    log(`  store ${Math.round(w.store)} items/s, raw pg ${Math.round(w.raw)} items/s (${load()})`);
    results.push(compared(ROWS.work, 'items/s', w.store, w.raw, WORK_TARGET));

    log(`PostgreSQL claim then succeed, ${WORKERS} workers, vs pg-boss: ${sizes.workItemsConcurrent} per side`);
    const b = await benchPgVersusPgBoss(await server.createDatabase(), sizes.workItemsConcurrent, WORKERS);
    log(`  store ${Math.round(b.store)} items/s, pg-boss ${Math.round(b.boss)} items/s (${load()})`);
    results.push(compared(ROWS.boss, 'items/s', b.store, b.boss, PG_BOSS_TARGET));
    return results;
  } finally {
    await server.stop();
  }
}
