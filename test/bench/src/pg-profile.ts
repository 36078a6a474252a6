/**
 * Where the PostgreSQL claim rows' time goes, per item and per side (`node dist/pg-profile.js [rounds] [items]`):
 * wall time, this process's CPU, the server's CPU (every backend of the embedded server, from /proc) and the
 * statements sent, for the store's one worker against the raw loop and for eight store workers against pg-boss,
 * alternating the sides `rounds` times on one server. CPU per item is steady on a loaded machine where items per
 * second are not; not part of `pnpm bench`. `THREADS=1` prints each measurement's CPU per thread of this process
 * (the main thread, V8's and libuv's), `PROFILE=1` writes the store side's CPU profiles to /tmp.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg } from 'node:os';
import { createIdGenerator, systemClock } from '@demiurge/contracts';
import { DurableWorkRuntime } from '@demiurge/control-plane';
import { startTestPostgres } from '@demiurge/event-store-postgres/testing';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { openWorkStore, rawClaimThenSucceed, seedRawWork, seedWork, storeWorkers } from './pg-work-bench.js';

const TICK_MS = 1000 / 100;

/** utime + stime (+ reaped children's) of a process, in ms. */
function cpuOf(pid: number | string, children: boolean): number {
  try {
    return cpuOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'), children);
  } catch {
    return 0;
  }
}

/** The same, from the text of a `/proc/.../stat` file already read. */
function cpuOfStat(stat: string, children: boolean): number {
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields from state (3rd): utime is 14th overall → index 11 here, stime 12, cutime 13, cstime 14
  const own = Number(f[11]) + Number(f[12]);
  return (own + (children ? Number(f[13]) + Number(f[14]) : 0)) * TICK_MS;
}

function ppidOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/** The server's CPU so far: the postmaster with its reaped children, and its live children. */
function serverCpu(postmaster: number): number {
  let total = cpuOf(postmaster, true);
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      if (ppidOf(pid) === postmaster) total += cpuOf(pid, false);
    } catch {
      // gone
    }
  }
  return total;
}

let statements = 0;
let bytes = 0;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
  statements++;
  const values = (
    typeof args[0] === 'object' && args[0] !== null && 'values' in args[0]
      ? (args[0] as { values: unknown }).values
      : args[1]
  ) as unknown[] | undefined;
  const text = typeof args[0] === 'string' ? args[0] : ((args[0] as { text?: string } | null)?.text ?? '');
  bytes += text.length + (values ? JSON.stringify(values).length : 0);
  return (query as (...a: unknown[]) => unknown).apply(this, args);
} as typeof query;

interface Totals {
  items: number;
  wallMs: number;
  clientMs: number;
  serverMs: number;
  statements: number;
  bytes: number;
  sysMs: number;
  /** The main thread's CPU (the rest of the client's is V8's and libuv's threads). */
  mainMs: number;
}

/** CPU so far of each thread of this process, by `tid name`. */
function threadCpu(): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    out.set(`${tid} ${stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))}`, cpuOfStat(stat, false));
  }
  return out;
}

async function measure(totals: Totals, postmaster: number, items: number, work: () => Promise<number>) {
  const th0 = process.env.THREADS ? threadCpu() : undefined;
  const s0 = serverCpu(postmaster);
  const c0 = process.cpuUsage();
  const m0 = cpuOf(`self/task/${process.pid}`, false);
  const n0 = statements;
  const b0 = bytes;
  const t0 = performance.now();
  const done = await work();
  totals.wallMs += performance.now() - t0;
  const c = process.cpuUsage(c0);
  totals.mainMs += cpuOf(`self/task/${process.pid}`, false) - m0;
  totals.clientMs += (c.user + c.system) / 1000;
  totals.serverMs += serverCpu(postmaster) - s0;
  totals.statements += statements - n0;
  totals.bytes += bytes - b0;
  totals.sysMs += c.system / 1000;
  totals.items += done || items;
  if (th0) {
    const per = [...threadCpu()]
      .map(([k, v]) => [k, v - (th0.get(k) ?? 0)] as const)
      .filter(([, v]) => v > 0)
      .map(([k, v]) => `${k} ${((v * 1000) / (done || items)).toFixed(0)}`);
    console.log(`  threads (µs per item): ${per.join(', ')}`);
  }
}

function line(name: string, t: Totals): string {
  const per = (v: number) => ((v * 1000) / t.items).toFixed(0);
  return `${name.padEnd(14)} ${((t.items * 1000) / t.wallMs).toFixed(0).padStart(6)} items/s  wall ${per(t.wallMs)} µs  client ${per(t.clientMs)} µs (main thread ${per(t.mainMs)})  server ${per(t.serverMs)} µs  statements ${(t.statements / t.items).toFixed(2)} sys ${per(t.sysMs)} µs bytes ${(t.bytes / t.items).toFixed(0)}`;
}

const zero = (): Totals => ({
  items: 0,
  wallMs: 0,
  clientMs: 0,
  serverMs: 0,
  statements: 0,
  bytes: 0,
  sysMs: 0,
  mainMs: 0,
});

/**
 * `PGSS=1`: statement counts and times from `pg_stat_statements` (a server started with it: `shared_preload_libraries`
 * and `pg_stat_statements.track_planning=on` through `DEMIURGE_TEST_PG_URL`, or an embedded server given them).
 */
async function resetStatements(db: pg.Client): Promise<void> {
  await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  await db.query('SELECT pg_stat_statements_reset()');
}

async function printStatements(db: pg.Client): Promise<void> {
  const { rows } =
    await db.query(`SELECT calls, round(total_exec_time::numeric, 1) AS ms, round(total_plan_time::numeric,1) AS plan,
    rows, shared_blks_hit AS hit, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS q
    FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
    ORDER BY total_exec_time DESC LIMIT 14`);
  for (const r of rows) console.log(r.calls, r.ms, r.plan, r.rows, r.hit, r.q);
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 4);
  const items = Number(process.argv[3] ?? 200);
  const only = process.argv[4];
  const server = await startTestPostgres();
  try {
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    const backend = (await admin.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const postmaster = ppidOf(backend);
    await admin.end();
    const ids = createIdGenerator(systemClock);
    if (only !== '8') {
      const url = await server.createDatabase();
      const store = await openWorkStore(url);
      const raw = new pg.Client({ connectionString: url });
      await raw.connect();
      const work = new DurableWorkRuntime({ store, clock: systemClock, ids, owner: 'bench' });
      await seedWork(work, ids, rounds * items + 50);
      await seedRawWork(raw, rounds * items + 50);
      const one = storeWorkers([work]);
      const rawSide = rawClaimThenSucceed(raw);
      await one(50);
      await rawSide(50);
      if (process.env.PGSS) await resetStatements(raw);
      const s = zero();
      const r = zero();
      for (let i = 0; i < rounds; i++) {
        const session = process.env.PROFILE ? new Session() : undefined;
        if (session) {
          session.connect();
          await session.post('Profiler.enable');
          await session.post('Profiler.start');
        }
        await measure(s, postmaster, items, () => one(items));
        if (session) {
          const { profile } = await session.post('Profiler.stop');
          writeFileSync(`/tmp/store1-${i}.cpuprofile`, JSON.stringify(profile));
          session.disconnect();
        }
        await measure(r, postmaster, items, async () => {
          await rawSide(items);
          return items;
        });
        console.log(`round ${i + 1}: ${line('store 1', s)}`);
        console.log(`round ${i + 1}: ${line('raw 1', r)}`);
      }
      if (process.env.PGSS) await printStatements(raw);
      console.log(`1 worker ratio ${(r.wallMs / s.wallMs).toFixed(3)} (${loadavg()[0]!.toFixed(1)})`);
      await store.close();
      await raw.end();
    }
    if (only !== '1') {
      const url = await server.createDatabase();
      const store = await openWorkStore(url, 10);
      const boss = new PgBoss({ connectionString: url, schema: 'pgboss', max: 10, supervise: false, schedule: false });
      // Its pool's connections end with the server (or `PGSS`'s reset): reported, not an unhandled 'error' event.
      boss.on('error', (err: unknown) => console.error('pg-boss error:', (err as Error).message));
      await boss.start();
      const works = Array.from(
        { length: 8 },
        (_, i) => new DurableWorkRuntime({ store, clock: systemClock, ids, owner: `bench-w${i + 1}` }),
      );
      const seeded = rounds * (items + 8) + 100;
      await seedWork(works[0]!, ids, seeded);
      await boss.createQueue('q');
      for (let done = 0; done < seeded; done += 500) {
        await boss.insert(
          'q',
          Array.from({ length: Math.min(500, seeded - done) }, () => ({ data: { taskId: ids.next('tsk') } })),
        );
      }
      const eight = storeWorkers(works);
      const bossSide = async (n: number) => {
        let done = 0;
        await Promise.all(
          Array.from({ length: 8 }, async () => {
            while (done < n) {
              const [job] = await boss.fetch('q');
              if (!job) continue;
              await boss.complete('q', job.id);
              done++;
            }
          }),
        );
        return done;
      };
      await eight(40);
      await bossSide(40);
      const stats = process.env.PGSS ? new pg.Client({ connectionString: url }) : undefined;
      if (stats) {
        await stats.connect();
        await resetStatements(stats);
      }
      const s = zero();
      const b = zero();
      for (let i = 0; i < rounds; i++) {
        const session = process.env.PROFILE ? new Session() : undefined;
        if (session) {
          session.connect();
          await session.post('Profiler.enable');
          await session.post('Profiler.start');
        }
        await measure(s, postmaster, items, () => eight(items - 8));
        if (session) {
          const { profile } = await session.post('Profiler.stop');
          writeFileSync(`/tmp/store8-${i}.cpuprofile`, JSON.stringify(profile));
          session.disconnect();
        }
        await measure(b, postmaster, items, () => bossSide(items - 8));
        console.log(`round ${i + 1}: ${line('store 8', s)}`);
        console.log(`round ${i + 1}: ${line('pg-boss 8', b)}`);
      }
      if (stats) {
        await printStatements(stats);
        await stats.end();
      }
      console.log(`8 workers ratio ${((s.items / s.wallMs) * (b.wallMs / b.items)).toFixed(3)}`);
      await store.close();
      await boss.stop({ graceful: false, close: true });
    }
  } finally {
    await server.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
