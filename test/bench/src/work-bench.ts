import { fork } from 'node:child_process';
import { join } from 'node:path';
import { createIdGenerator, type IdGenerator, systemClock } from '@demiurge/contracts';
import { controlPlaneProjectors, DurableWorkRuntime } from '@demiurge/control-plane';
import type { EventStore } from '@demiurge/event-store';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import type Database from 'better-sqlite3';
import { interleave, type Workload } from './interleave.js';
import { openRaw } from './raw-db.js';
import { withTempDir } from './temp-dir.js';

const KIND = 'task.completion';

/** Enqueues `n` task-completion items, 100 in flight at a time. */
export async function seedWork(work: DurableWorkRuntime, ids: IdGenerator, n: number): Promise<void> {
  for (let done = 0; done < n; done += 100) {
    const batch = Math.min(100, n - done);
    await Promise.all(
      Array.from({ length: batch }, (_, i) =>
        work.enqueue({ kind: KIND, subjectId: `s${done + i}`, payload: { taskId: ids.next('tsk') } }),
      ),
    );
  }
}

function storeClaimThenSucceed(work: DurableWorkRuntime): Workload {
  return async (n) => {
    for (let i = 0; i < n; i++) {
      const [claim] = await work.claimDue({ kind: KIND, limit: 1 });
      if (!claim) throw new Error('the bench ran out of work items');
      await work.succeed(claim);
    }
  };
}

/** The raw loop's table: the columns a claim and a success write, indexed for "oldest claimable". */
export function createRawWorkTable(db: Database.Database, n: number): void {
  db.exec(`CREATE TABLE work_items (work_id TEXT PRIMARY KEY, kind TEXT NOT NULL, status TEXT NOT NULL,
    claim_token TEXT, owner TEXT, lease_until TEXT, attempts INTEGER NOT NULL, next_attempt_at TEXT NOT NULL)`);
  db.exec('CREATE INDEX work_items_claimable ON work_items (status, next_attempt_at)');
  const insert = db.prepare("INSERT INTO work_items VALUES (?, 'task.completion', 'queued', NULL, NULL, NULL, 0, ?)");
  db.transaction(() => {
    for (let i = 0; i < n; i++)
      insert.run(`w${String(i).padStart(8, '0')}`, new Date(1_700_000_000_000 + i).toISOString());
  })();
}

/** Claim (BEGIN IMMEDIATE, select the oldest claimable, update token/lease/attempts, commit), then succeed. */
export function rawClaimThenSucceed(db: Database.Database): Workload {
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const oldest = db.prepare(
    `SELECT work_id, attempts FROM work_items WHERE status IN ('queued', 'retry_scheduled') AND next_attempt_at <= ?
     ORDER BY next_attempt_at LIMIT 1`,
  );
  const claim = db.prepare(
    "UPDATE work_items SET status = 'claimed', claim_token = ?, owner = 'bench', lease_until = ?, attempts = ? WHERE work_id = ?",
  );
  const succeed = db.prepare(
    "UPDATE work_items SET status = 'succeeded', claim_token = NULL, lease_until = NULL WHERE work_id = ? AND claim_token = ?",
  );
  let token = 0;
  return async (n) => {
    for (let i = 0; i < n; i++) {
      const now = new Date().toISOString();
      begin.run();
      const row = oldest.get(now) as { work_id: string; attempts: number } | undefined;
      if (!row) throw new Error('the raw bench ran out of work items');
      const t = `t${++token}`;
      claim.run(t, new Date(Date.now() + 30_000).toISOString(), row.attempts + 1, row.work_id);
      commit.run();
      begin.run();
      succeed.run(row.work_id, t);
      commit.run();
      await Promise.resolve();
    }
  };
}

/**
 * One worker taking work items through claim then succeed (two commands), against a raw loop doing the
 * same two transactions, both with synchronous=FULL.
 */
export async function benchClaimSucceed(count: number, warmup: number): Promise<{ store: number; raw: number }> {
  return withTempDir('work', async (dir) => {
    const ids = createIdGenerator(systemClock);
    const store = await openSqliteEventStore({ path: join(dir, 'store.sqlite3'), projectors: controlPlaneProjectors });
    const raw = openRaw(join(dir, 'raw.sqlite3'), 'FULL');
    try {
      const work = new DurableWorkRuntime({ store, clock: systemClock, ids, owner: 'bench' });
      await seedWork(work, ids, count + warmup);
      createRawWorkTable(raw, count + warmup);
      const t = await interleave(storeClaimThenSucceed(work), rawClaimThenSucceed(raw), count, 4, warmup);
      return { store: t.a, raw: t.b };
    } finally {
      await store.close();
      raw.close();
    }
  });
}

/** Four processes claiming and completing `count` items from one file: items per second, wall clock. */
export async function benchFourProcesses(count: number): Promise<number> {
  return withTempDir('work4', async (dir) => {
    const path = join(dir, 'store.sqlite3');
    const ids = createIdGenerator(systemClock);
    const store: EventStore = await openSqliteEventStore({ path, projectors: controlPlaneProjectors });
    await seedWork(new DurableWorkRuntime({ store, clock: systemClock, ids, owner: 'seeder' }), ids, count);
    await store.close();
    const children = [1, 2, 3, 4].map((i) => fork(join(import.meta.dirname, 'work-child.js'), [path, `w${i}`]));
    await Promise.all(children.map((c) => new Promise((resolve) => c.once('message', resolve))));
    const started = performance.now();
    const done = children.map(
      (c) =>
        new Promise<number>((resolve, reject) => {
          c.on('message', (m: { done?: number }) => m.done !== undefined && resolve(m.done));
          c.once('exit', (code) => code !== 0 && reject(new Error(`work child exited with ${code}`)));
        }),
    );
    for (const c of children) c.send('go');
    const total = (await Promise.all(done)).reduce((a, b) => a + b, 0);
    const seconds = (performance.now() - started) / 1000;
    if (total !== count) throw new Error(`four processes completed ${total} items, expected ${count}`);
    return count / seconds;
  });
}
