import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createIdGenerator, systemClock } from '@demiurge/contracts';
import { controlPlaneProjectors, DurableWorkRuntime } from '@demiurge/control-plane';
import { openSqliteEventStore, type SqliteEventStore } from '@demiurge/event-store-sqlite';
import type Database from 'better-sqlite3';
import { timed } from './interleave.js';
import { openRaw } from './raw-db.js';
import { withTempDir } from './temp-dir.js';
import { createRawWorkTable, rawClaimThenSucceed, seedWork } from './work-bench.js';

const KIND = 'task.completion';

export interface ClaimBurst {
  /** Items/s through claimDue({ limit: 1 }) then succeed, 8 concurrent workers on one store. */
  readonly workers8: number;
  /**
   * The same 8 workers on a second store opened with `synchronous=NORMAL` (WAL: no fsync at any commit), in the
   * same rounds: what the store's CPU alone allows, the ceiling of the `FULL` row whatever the disk.
   */
  readonly workers8NoFsync: number;
  /** The same with 32 workers. */
  readonly workers32: number;
  /** Event-loop delay p99 (ms) during the 32-worker burst. */
  readonly loopDelayP99Ms: number;
  /**
   * The longest an operator-status event (an asynchronous projector) waited between its commit and its
   * application during the 32-worker burst, in ms (the raw loops of the other rounds block the event loop,
   * so they are left out).
   */
  readonly operatorStatusLagMs: number;
  /** Raw loop: claim the oldest item in one transaction, succeed it in a second (one worker). */
  readonly raw1: number;
  /** Raw loop claiming 8 items per transaction, then succeeding them in a second one. */
  readonly raw8: number;
}

/** Until the store's asynchronous projectors applied everything (its timer does it after the target lag). */
async function waitForAsyncProjections(store: SqliteEventStore): Promise<void> {
  const started = performance.now();
  while (store.projectionLag().pendingEvents > 0 && performance.now() - started < 10_000) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** `workers` concurrent workers each taking items through claim then succeed until `items` are done. */
async function claimingWorkers(work: DurableWorkRuntime, workers: number, items: number): Promise<number> {
  let left = items;
  const ms = await timed(async () => {
    await Promise.all(
      Array.from({ length: workers }, async () => {
        while (left > 0) {
          left--;
          const [claim] = await work.claimDue({ kind: KIND, limit: 1 });
          if (!claim) throw new Error('the bench ran out of work items');
          await work.succeed(claim);
        }
      }),
    );
  });
  return (items * 1000) / ms;
}

/** Claims `per` oldest claimable items in one transaction, then succeeds them in a second one. */
function rawBatchedClaims(db: Database.Database, per: number): (n: number) => Promise<void> {
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const oldest = db.prepare(
    `SELECT work_id, attempts FROM work_items WHERE status IN ('queued', 'retry_scheduled') AND next_attempt_at <= ?
     ORDER BY next_attempt_at LIMIT ?`,
  );
  const claim = db.prepare(
    "UPDATE work_items SET status = 'claimed', claim_token = ?, owner = 'bench', lease_until = ?, attempts = ? WHERE work_id = ?",
  );
  const succeed = db.prepare(
    "UPDATE work_items SET status = 'succeeded', claim_token = NULL, lease_until = NULL WHERE work_id = ? AND claim_token = ?",
  );
  let token = 0;
  return async (n) => {
    for (let done = 0; done < n; done += per) {
      const now = new Date().toISOString();
      begin.run();
      const rows = oldest.all(now, Math.min(per, n - done)) as { work_id: string; attempts: number }[];
      if (rows.length === 0) throw new Error('the raw bench ran out of work items');
      const tokens = rows.map((row) => {
        const t = `b${++token}`;
        claim.run(t, new Date(Date.now() + 30_000).toISOString(), row.attempts + 1, row.work_id);
        return t;
      });
      commit.run();
      begin.run();
      for (const [i, row] of rows.entries()) succeed.run(row.work_id, tokens[i]);
      commit.run();
      await Promise.resolve();
    }
  };
}

/**
 * Concurrent claimers through `claimDue` (8 and 32 workers, one store, FULL) against raw loops on the same
 * machine, in alternating rounds: one item per transaction pair, and 8 items per transaction pair. The same 8
 * workers on a store without fsync (`NORMAL`) run in the same rounds, for the ceiling the store's CPU sets. The
 * event-loop delay is sampled (1 ms resolution) during the 32-worker burst.
 */
export async function benchConcurrentClaims(count: number, warmup: number): Promise<ClaimBurst> {
  return withTempDir('claims', async (dir) => {
    const ids = createIdGenerator(systemClock);
    const store = await openSqliteEventStore({ path: join(dir, 'store.sqlite3'), projectors: controlPlaneProjectors });
    const noFsync = await openSqliteEventStore({
      path: join(dir, 'no-fsync.sqlite3'),
      projectors: controlPlaneProjectors,
      synchronous: 'NORMAL',
    });
    const raw = openRaw(join(dir, 'raw.sqlite3'), 'FULL');
    try {
      const work = new DurableWorkRuntime({ store, clock: systemClock, ids, owner: 'bench' });
      const workNoFsync = new DurableWorkRuntime({ store: noFsync, clock: systemClock, ids, owner: 'bench' });
      await seedWork(work, ids, 2 * count + warmup);
      await seedWork(workNoFsync, ids, count + warmup);
      createRawWorkTable(raw, 2 * count + 2 * warmup);
      await claimingWorkers(work, 8, warmup);
      await claimingWorkers(workNoFsync, 8, warmup);
      const one = rawClaimThenSucceed(raw);
      const eight = rawBatchedClaims(raw, 8);
      await one(warmup);
      await eight(warmup);
      // Four alternating rounds, so that drift of the machine (disk, other load) falls on every side alike.
      const ms = { raw1: 0, workers8: 0, raw8: 0, workers8NoFsync: 0 };
      const chunk = Math.ceil(count / 4);
      for (let done = 0; done < count; done += chunk) {
        const n = Math.min(chunk, count - done);
        // The raw loops swap places every round (the first side of a round is measured slower: see `interleave`).
        const swap = (done / chunk) % 2 === 1;
        if (swap) ms.raw8 += await timed(() => eight(n));
        else ms.raw1 += await timed(() => one(n));
        ms.workers8 += (n * 1000) / (await claimingWorkers(work, 8, n));
        ms.workers8NoFsync += (n * 1000) / (await claimingWorkers(workNoFsync, 8, n));
        if (swap) ms.raw1 += await timed(() => one(n));
        else ms.raw8 += await timed(() => eight(n));
      }
      const [raw1, workers8, raw8, workers8NoFsync] = [ms.raw1, ms.workers8, ms.raw8, ms.workers8NoFsync].map(
        (t) => (count * 1000) / t,
      ) as [number, number, number, number];
      const histogram = monitorEventLoopDelay({ resolution: 1 });
      // Wait out what the earlier rounds left, then measure the burst's lag alone.
      await waitForAsyncProjections(store);
      store.projectionLag({ reset: true });
      histogram.enable();
      const workers32 = await claimingWorkers(work, 32, count);
      histogram.disable();
      await waitForAsyncProjections(store);
      return {
        workers8,
        workers8NoFsync,
        workers32,
        raw1,
        raw8,
        loopDelayP99Ms: histogram.percentile(99) / 1e6,
        operatorStatusLagMs: store.projectionLag().maxLagMs,
      };
    } finally {
      await store.close();
      await noFsync.close();
      raw.close();
    }
  });
}
