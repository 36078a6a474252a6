import { fork } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFakeClock, createSeededIdGenerator } from '@demiurge/contracts/testing';
import { DurableWorkRuntime, HostWorkLifecycleRuntime, RuntimeControlPlane } from '@demiurge/control-plane';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { expect, it } from 'vitest';
import { SchedulerRuntime, schedulerProjectors } from '../src/index.js';
import { expectCleanLog } from './harness.js';

interface Report {
  owner: string;
  fired: { dueAt: string; outcome: string; taskId: string }[];
  errors: string[];
  ticks: string[];
}

const DIST = join(import.meta.dirname, '..', 'dist', 'index.js');

it('three processes tick and run due on one database: a due time in the past fires exactly once', async () => {
  if (!existsSync(DIST))
    throw new Error('the fixtures import the built package: run `pnpm exec tsc -p tsconfig.build.json`');
  const dir = mkdtempSync(join(tmpdir(), 'demiurge-sched3-'));
  try {
    const path = join(dir, 'runtime.sqlite3');
    const coreDir = join(dir, 'core');
    mkdirSync(join(coreDir, 'schedules'), { recursive: true });
    writeFileSync(join(coreDir, 'schedules', 'digest.yaml'), 'cron: "0 9 * * *"\nprompt: Write the morning digest.\n');
    // First sight at 08:00: the 09:00 fire is recorded; then no scheduler runs until 09:05.
    const clock = createFakeClock(Date.parse('2026-05-01T08:00:00Z'));
    const ids = createSeededIdGenerator(clock, 3);
    let store = await openSqliteEventStore({ path, projectors: schedulerProjectors, clock, ids });
    const work = new DurableWorkRuntime({ store, clock, ids, owner: 'seeder' });
    const seeder = new SchedulerRuntime({
      store,
      clock,
      ids,
      work,
      host: new HostWorkLifecycleRuntime({ store, clock, ids, work }),
      controlPlane: new RuntimeControlPlane({ store, clock, ids, work }),
      coreId: 'default',
      owner: 'seeder',
      schedules: coreDir,
      startSession: () => Promise.reject(new Error('the seeder never fires')),
    });
    expect((await seeder.tick()).entries.map((e) => e.action)).toEqual(['scheduled']);
    await store.close();

    const children = ['p1', 'p2', 'p3'].map((owner) =>
      fork(
        join(import.meta.dirname, 'fixtures', 'scheduler-process.mjs'),
        [path, coreDir, owner, '2026-05-01T09:05:00Z'],
        {
          stdio: 'inherit',
        },
      ),
    );
    await Promise.all(children.map((c) => new Promise((resolve) => c.once('message', resolve))));
    const reports = Promise.all(
      children.map(
        (c) =>
          new Promise<Report>((resolve, reject) => {
            c.on('message', (m: { report?: Report }) => m.report && resolve(m.report));
            c.once('exit', (code) => code !== 0 && reject(new Error(`scheduler process exited with ${code}`)));
          }),
      ),
    );
    for (const c of children) c.send('go');
    const results = await reports;
    for (const r of results) expect(r.errors).toEqual([]);
    const fired = results.flatMap((r) => r.fired);
    expect(fired).toEqual([expect.objectContaining({ dueAt: '2026-05-01T09:00:00.000Z', outcome: 'completed' })]);

    store = await openSqliteEventStore({ path, projectors: schedulerProjectors, clock, ids });
    const count = async (type: string) => (await store.readAll({ types: [type] })).length;
    expect(await count('work.enqueued')).toBe(1);
    expect(await count('work.claimed')).toBe(1);
    expect(await count('work.succeeded')).toBe(1);
    expect(await count('session.created')).toBe(1);
    expect(await count('task.submitted')).toBe(1);
    expect(await count('schedule_instance.claimed')).toBe(1);
    expect(await count('schedule_instance.completed')).toBe(1);
    // 09:00 (fired) and the next day's 09:00, however many processes raced to record it.
    expect(await count('schedule_instance.scheduled')).toBe(2);
    await expectCleanLog(store);
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
