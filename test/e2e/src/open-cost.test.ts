import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CHECKPOINT_POSITIONS } from './checkpoints.js';
import { demiurge, demiurgeJson, tempHome } from './cli.js';
import { seedRuntime } from './seed.js';

// A home written by real commands: `demiurge demo` and the runtimes' seed (sessions, runs, tasks, work).
let home: ReturnType<typeof tempHome>;
let database: string;
beforeAll(async () => {
  home = tempHome();
  database = join(home.path, 'runtime', 'runtime.sqlite3');
  await demiurgeJson(['demo', '--sample', '--home', home.path]);
  await seedRuntime(home.path);
});
afterAll(() => home.remove());

it('after commands ran, every projector checkpoint is at the head: the next open has nothing to catch up', () => {
  const db = new Database(database, { readonly: true });
  try {
    const head = db.prepare('SELECT MAX(position) FROM events').pluck().get() as number;
    const checkpoints = db.prepare(CHECKPOINT_POSITIONS).all() as {
      name: string;
      position: number;
    }[];
    expect(head).toBeGreaterThan(10);
    expect(checkpoints.length).toBeGreaterThan(3);
    for (const cp of checkpoints)
      expect({ name: cp.name, position: cp.position }).toEqual({ name: cp.name, position: head });
  } finally {
    db.close();
  }
});

it('status is read only: it answers while another process holds the write lock', async () => {
  const holder = new Database(database);
  holder.exec('BEGIN IMMEDIATE');
  try {
    // Before, opening took the write lock to catch projectors up: it waited out the 5 s busy timeout and
    // failed ("database is locked"), since the lock is held until the command has ended.
    const run = await demiurge(['status', '--json', '--home', home.path]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ head: expect.any(Number), sessions: { total: 2 } });
  } finally {
    holder.exec('ROLLBACK');
    holder.close();
  }
});

it('rebuild counts the documents of each projection in its summary', async () => {
  const { json } = await demiurgeJson<{ projections: { name: string; collections: Record<string, number> }[] }>([
    'rebuild',
    '--home',
    home.path,
  ]);
  const db = new Database(database, { readonly: true });
  try {
    const rows = db
      .prepare('SELECT projector, collection, COUNT(*) AS n FROM projection_documents GROUP BY projector, collection')
      .all() as { projector: string; collection: string; n: number }[];
    for (const p of json.projections) {
      const expected = Object.fromEntries(rows.filter((r) => r.projector === p.name).map((r) => [r.collection, r.n]));
      expect({ name: p.name, collections: p.collections }).toEqual({ name: p.name, collections: expected });
    }
  } finally {
    db.close();
  }
});
