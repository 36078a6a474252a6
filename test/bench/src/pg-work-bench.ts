import { createIdGenerator, type IdGenerator, systemClock } from '@demiurge/contracts';
import { controlPlaneProjectors, DurableWorkRuntime } from '@demiurge/control-plane';
import { openPostgresEventStore, type PostgresEventStore } from '@demiurge/event-store-postgres';
import pg from 'pg';
import { interleave, timed, type Workload } from './interleave.js';

const KIND = 'task.completion';

/** Opens the store with the control plane's projectors (the work-items read model claiming reads). */
export function openWorkStore(url: string, maxConnections = 4): Promise<PostgresEventStore> {
  return openPostgresEventStore({ url, projectors: controlPlaneProjectors, maxConnections });
}

/** Enqueues `n` task-completion items, 50 in flight at a time. */
export async function seedWork(work: DurableWorkRuntime, ids: IdGenerator, n: number): Promise<void> {
  for (let done = 0; done < n; done += 50) {
    const batch = Math.min(50, n - done);
    await Promise.all(
      Array.from({ length: batch }, (_, i) =>
        work.enqueue({ kind: KIND, subjectId: `s${done + i}`, payload: { taskId: ids.next('tsk') } }),
      ),
    );
  }
}

/** `workers` loops of claimDue(limit 1) then succeed, until `n` items more have succeeded; returns how many did. */
export function storeWorkers(works: readonly DurableWorkRuntime[]): (n: number) => Promise<number> {
  return async (n) => {
    let done = 0;
    let idle = 0;
    await Promise.all(
      works.map(async (work) => {
        while (done < n) {
          const [claim] = await work.claimDue({ kind: KIND, limit: 1 });
          if (!claim) {
            // Another worker holds what this one listed; give up only after many empty polls in a row.
            if (++idle > 2000) throw new Error('the store workers found nothing to claim 2000 times in a row');
            continue;
          }
          idle = 0;
          await work.succeed(claim);
          done++;
        }
      }),
    );
    return done;
  };
}

/** The raw side's job table: the columns a claim and a success write, indexed for "oldest claimable". */
export async function seedRawWork(db: pg.Client, n: number): Promise<void> {
  await db.query(`CREATE SCHEMA raw_work;
    CREATE TABLE raw_work.work_items (work_id text PRIMARY KEY, kind text NOT NULL, status text NOT NULL,
      claim_token text, owner text, lease_until timestamptz, attempts integer NOT NULL, next_attempt_at timestamptz NOT NULL);
    CREATE INDEX work_items_claimable ON raw_work.work_items (status, next_attempt_at)`);
  await db.query(
    `INSERT INTO raw_work.work_items SELECT 'w' || lpad(i::text, 8, '0'), 'task.completion', 'queued', NULL, NULL, NULL, 0,
      now() - interval '1 hour' + i * interval '1 millisecond' FROM generate_series(1, $1) AS i`,
    [n],
  );
}

const CLAIMABLE = `SELECT work_id, attempts FROM raw_work.work_items
  WHERE status IN ('queued', 'retry_scheduled') AND next_attempt_at <= now()
  ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED`;
const CLAIM = `UPDATE raw_work.work_items SET status = 'claimed', claim_token = $1, owner = 'bench',
  lease_until = now() + interval '30 seconds', attempts = $2 WHERE work_id = $3`;
const SUCCEED = `UPDATE raw_work.work_items SET status = 'succeeded', claim_token = NULL, lease_until = NULL
  WHERE work_id = $1 AND claim_token = $2`;

/** Claim (BEGIN, the oldest claimable FOR UPDATE SKIP LOCKED, set token/lease/attempts, COMMIT), then succeed. */
export function rawClaimThenSucceed(db: pg.Client): Workload {
  let token = 0;
  return async (n) => {
    for (let i = 0; i < n; i++) {
      await db.query('BEGIN');
      const row = (await db.query<{ work_id: string; attempts: number }>({ name: 'claimable', text: CLAIMABLE }))
        .rows[0];
      if (!row) throw new Error('the raw bench ran out of work items');
      const t = `t${++token}`;
      await db.query({ name: 'claim', text: CLAIM, values: [t, row.attempts + 1, row.work_id] });
      await db.query('COMMIT');
      await db.query('BEGIN');
      const done = await db.query({ name: 'succeed', text: SUCCEED, values: [row.work_id, t] });
      if (done.rowCount !== 1) throw new Error(`raw: ${row.work_id} was not succeeded`);
      await db.query('COMMIT');
    }
  };
}

/**
 * One worker taking work items through claim then succeed (two commands on the PostgreSQL store, each a load
 * of the item and an append through the work machine), against a raw `pg` client doing the claim and the
 * success as two transactions on a job table in the same database (schema `raw_work`).
 */
export async function benchPgClaimSucceed(url: string, count: number): Promise<{ store: number; raw: number }> {
  const warmup = Math.min(50, Math.ceil(count / 10));
  const ids = createIdGenerator(systemClock);
  const store = await openWorkStore(url);
  const raw = new pg.Client({ connectionString: url });
  await raw.connect();
  try {
    const work = new DurableWorkRuntime({ store, clock: systemClock, ids, owner: 'bench' });
    await seedWork(work, ids, count + warmup);
    await seedRawWork(raw, count + warmup);
    const one = storeWorkers([work]);
    const storeSide: Workload = async (n) => {
      if ((await one(n)) !== n) throw new Error('one store worker completed more items than asked');
    };
    const t = await interleave(storeSide, rawClaimThenSucceed(raw), count, 4, warmup);
    return { store: t.a, raw: t.b };
  } finally {
    await store.close();
    await raw.end();
  }
}

/** Times `work`, which reports how many items it completed: items per second. */
export async function perSecond(work: () => Promise<number>): Promise<{ items: number; ms: number }> {
  let items = 0;
  const ms = await timed(async () => {
    items = await work();
  });
  return { items, ms };
}
