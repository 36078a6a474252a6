import { createIdGenerator, systemClock } from '@demiurge/contracts';
import { DurableWorkRuntime } from '@demiurge/control-plane';
import { PgBoss } from 'pg-boss';
import { openWorkStore, perSecond, seedWork, storeWorkers } from './pg-work-bench.js';

const QUEUE = 'task-completion';
/** Connections each side may use: pg-boss's default pool size, given to the store too. */
const POOL = 10;

/** `workers` loops of fetch (one job) then complete, until `n` more jobs completed; returns how many did. */
function bossWorkers(boss: PgBoss, workers: number): (n: number) => Promise<number> {
  return async (n) => {
    let done = 0;
    let idle = 0;
    await Promise.all(
      Array.from({ length: workers }, async () => {
        while (done < n) {
          const [job] = await boss.fetch(QUEUE);
          if (!job) {
            if (++idle > 2000) throw new Error('the pg-boss workers found nothing to fetch 2000 times in a row');
            continue;
          }
          idle = 0;
          await boss.complete(QUEUE, job.id);
          done++;
        }
      }),
    );
    return done;
  };
}

/**
 * `workers` concurrent workers taking items through claim then succeed on the PostgreSQL store (one store, one
 * DurableWorkRuntime per worker, each its own owner), against pg-boss doing the same job lifecycle (fetch one
 * job, complete it) with as many workers, in the same database (pg-boss in its own schema `pgboss`). Both
 * sides run in this process with pools of {@link POOL} connections, alternating in chunks after a warm-up.
 */
export async function benchPgVersusPgBoss(
  url: string,
  count: number,
  workers: number,
): Promise<{ store: number; boss: number }> {
  const warmup = Math.min(50, Math.ceil(count / 10));
  const rounds = 4;
  const ids = createIdGenerator(systemClock);
  const store = await openWorkStore(url, POOL);
  const boss = new PgBoss({ connectionString: url, schema: 'pgboss', max: POOL, supervise: false, schedule: false });
  boss.on('error', (err: unknown) => console.error('[bench] pg-boss error:', err));
  await boss.start();
  try {
    const works = Array.from(
      { length: workers },
      (_, i) => new DurableWorkRuntime({ store, clock: systemClock, ids, owner: `bench-w${i + 1}` }),
    );
    // Workers finish what they claimed, so each run may go up to `workers - 1` past its count: seed spare items.
    const seeded = count + warmup + 4 * workers;
    await seedWork(works[0]!, ids, seeded);
    await boss.createQueue(QUEUE);
    for (let done = 0; done < seeded; done += 500) {
      const jobs = Array.from({ length: Math.min(500, seeded - done) }, () => ({ data: { taskId: ids.next('tsk') } }));
      await boss.insert(QUEUE, jobs);
    }
    const storeSide = storeWorkers(works);
    const bossSide = bossWorkers(boss, workers);
    await storeSide(warmup);
    await bossSide(warmup);
    const totals = { store: { items: 0, ms: 0 }, boss: { items: 0, ms: 0 } };
    const chunk = Math.ceil(count / rounds);
    for (let done = 0, round = 0; done < count; done += chunk, round++) {
      // Workers may finish a few past the chunk (each completes what it claimed): what they did is counted.
      const n = Math.min(chunk, count - done) - workers;
      // The side that runs first alternates, as in `interleave` (a bias against the first side otherwise).
      const first = round % 2 === 0 ? 'store' : 'boss';
      const b0 = first === 'boss' ? await perSecond(() => bossSide(n)) : undefined;
      const s = await perSecond(() => storeSide(n));
      const b = b0 ?? (await perSecond(() => bossSide(n)));
      totals.store.items += s.items;
      totals.store.ms += s.ms;
      totals.boss.items += b.items;
      totals.boss.ms += b.ms;
    }
    return {
      store: (totals.store.items * 1000) / totals.store.ms,
      boss: (totals.boss.items * 1000) / totals.boss.ms,
    };
  } finally {
    await store.close();
    await boss.stop({ graceful: false, close: true });
  }
}
