import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createIdGenerator, systemClock } from '@demiurge/contracts';
import type { EventStore } from '@demiurge/event-store';
import { openPostgresEventStore } from '@demiurge/event-store-postgres';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { expect, it } from 'vitest';
import { controlPlaneProjectors, DurableWorkRuntime } from '../src/index.js';
import { storeKind, testDatabase } from './harness.js';

interface Report {
  owner: string;
  done: string[];
  errors: string[];
  /** Version conflicts of this process's appends (claims it lost to another process, on the listing path). */
  conflicts: number;
  /** Claim races its `claimDue` calls lost (`DurableWorkRuntime.claimStats.racesLost`). */
  racesLost: number;
}

// On PostgreSQL each append is a few round trips under the allocator's lock: fewer items keep the CI budget.
const ITEMS = storeKind === 'postgres' ? { batches: 4, perBatch: 50 } : { batches: 20, perBatch: 100 };
const TOTAL = ITEMS.batches * ITEMS.perBatch;

it(`four processes claim ${TOTAL} items from one ${storeKind} store: each claimed and completed exactly once`, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'demiurge-claim-'));
  try {
    // The SQLite file, or a PostgreSQL database's URL: the children open the same store.
    const path = (await testDatabase()) ?? join(dir, 'runtime.sqlite3');
    const store: EventStore = path.startsWith('postgres')
      ? await openPostgresEventStore({ url: path, projectors: controlPlaneProjectors })
      : await openSqliteEventStore({ path, projectors: controlPlaneProjectors });
    const ids = createIdGenerator(systemClock);
    const work = new DurableWorkRuntime({ store, clock: systemClock, ids, owner: 'seeder' });
    const all: string[] = [];
    for (let batch = 0; batch < ITEMS.batches; batch++) {
      const made = await Promise.all(
        Array.from({ length: ITEMS.perBatch }, (_, i) => {
          const taskId = ids.next('tsk');
          return work.enqueue({ kind: 'task.completion', subjectId: `${batch}-${i}`, payload: { taskId } });
        }),
      );
      all.push(...made.map((m) => m.workId));
    }
    const children = ['w1', 'w2', 'w3', 'w4'].map((owner) =>
      fork(join(import.meta.dirname, 'fixtures', 'claimer.mjs'), [path, owner], { stdio: 'inherit' }),
    );
    await Promise.all(children.map((c) => new Promise((resolve) => c.once('message', resolve))));
    const reports = Promise.all(
      children.map(
        (c) =>
          new Promise<Report>((resolve, reject) => {
            c.on('message', (m: { report?: Report }) => m.report && resolve(m.report));
            c.once('exit', (code) => code !== 0 && reject(new Error(`claimer exited with ${code}`)));
          }),
      ),
    );
    for (const c of children) c.send('go');
    const results = await reports;
    for (const r of results) expect(r.errors).toEqual([]);
    const done = results.flatMap((r) => r.done);
    expect(done).toHaveLength(TOTAL);
    expect(new Set(done)).toEqual(new Set(all));
    expect(results.filter((r) => r.done.length > 0).length).toBeGreaterThan(1);
    const claimed = await store.readAll({ types: ['work.claimed'] });
    const succeeded = await store.readAll({ types: ['work.succeeded'] });
    expect(claimed).toHaveLength(TOTAL);
    expect(new Set(claimed.map((e) => e.streamId)).size).toBe(TOTAL);
    expect(succeeded).toHaveLength(TOTAL);
    console.info(
      `${storeKind}: claim races lost per process: ${results.map((r) => r.racesLost).join(', ')}` +
        ` (version conflicts: ${results.map((r) => r.conflicts).join(', ')})`,
    );
    // On PostgreSQL claims are decided under the log-head lock from the read model as it is there: no process
    // ever claims from a stale list, so none loses a race (the listing path lost about 0.4 per item here). On
    // SQLite it depends on timing (reported for docs/postgres.md, not asserted).
    if (storeKind === 'postgres') expect(results.map((r) => r.racesLost + r.conflicts)).toEqual([0, 0, 0, 0]);
    for (const id of all.slice(0, 50)) expect((await work.get(id)).status).toBe('succeeded');
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 300_000);
