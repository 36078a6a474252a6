import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { CHECKPOINT_POSITIONS } from './checkpoints.js';
import { demiurge, demiurgeJson, tempHome } from './cli.js';
import { until } from './core-home.js';
import { INIT, rawGateway, request, type ServeProcess, startServe, writeHostHome } from './serve-process.js';

// operator-status is an asynchronous read model (issue 16): a real host applies it after the commit, and
// every reader (the gateway's status, `demiurge status`, verify) sees it caught up.

let home: ReturnType<typeof tempHome>;
let serve: ServeProcess | undefined;
beforeEach(() => {
  home = tempHome();
});
afterEach(async () => {
  await serve?.stop('SIGKILL');
  serve = undefined;
  home.remove();
});

/** How many events of `type` the file's log holds, read by another connection. */
function countEvents(type: string): number {
  const db = new Database(join(home.path, 'runtime', 'runtime.sqlite3'), { readonly: true });
  try {
    return db.prepare('SELECT COUNT(*) FROM events WHERE type = ?').pluck().get(type) as number;
  } finally {
    db.close();
  }
}

/** The head and the checkpoints, as another connection reads the file (one snapshot: the host may be committing). */
function fileState(): { head: number; checkpoints: Record<string, number> } {
  const db = new Database(join(home.path, 'runtime', 'runtime.sqlite3'), { readonly: true });
  try {
    return db.transaction(() => {
      const head = db.prepare('SELECT COALESCE(MAX(position), 0) FROM events').pluck().get() as number;
      const rows = db.prepare(CHECKPOINT_POSITIONS).all() as {
        name: string;
        position: number;
      }[];
      return { head, checkpoints: Object.fromEntries(rows.map((r) => [r.name, r.position])) };
    })();
  } finally {
    db.close();
  }
}

it('a serving host applies operator-status after the commit; the gateway, status and verify read it caught up', async () => {
  // A target lag far longer than the test: only reads (and close) bring it to the head.
  const ws = writeHostHome(home.path, { extra: ['store:', '  async_projection_lag_ms: 600000'] });
  serve = await startServe(home.path, ws);
  const gw = await rawGateway(serve.socket);
  gw.write(request('init', 'operator.initialize', INIT));
  await gw.take((f) => f.id === 'init');
  gw.write(request('submit', 'operator.submit', { text: 'hello there' }));
  await gw.take((f) => f.id === 'submit');
  // The answer's delivery: the outbox work item was claimed and succeeded (work.* and delivery.* events).
  await gw.take((f) => f.event === 'operator.deliver', 30_000);
  // The client is told first, the send's success is committed right after (under load, after this frame).
  await until(
    async () => countEvents('work.succeeded'),
    (n) => n >= 1,
    30_000,
  );

  const during = fileState();
  expect(during.checkpoints['work-items']).toBe(during.head);
  // Behind in the file: the host has not applied it yet (inline, it would be at the head).
  expect(during.checkpoints['operator-status']).toBeLessThan(during.head);

  // The gateway's status reads it through the store: caught up first.
  gw.write(request('status', 'operator.status'));
  const status = (await gw.take((f) => f.id === 'status')) as {
    result: { work: { counts: Record<string, number>; running: unknown[] } };
  };
  const counts = status.result.work.counts;
  const delivered = Object.entries(counts).filter(([key]) => /^work\/delivery\.send\/succeeded$/.test(key));
  expect(delivered).toEqual([['work/delivery.send/succeeded', 1]]);
  expect(Object.keys(counts).filter((key) => key.startsWith('delivery/') && key.endsWith('/sent'))).toHaveLength(1);
  expect(status.result.work.running).toEqual([]);
  const after = fileState();
  expect(after.checkpoints['operator-status']).toBe(after.head);

  // `demiurge status` (another process) while the host serves: the same counts.
  const { json } = await demiurgeJson<{ work: Record<string, Record<string, number>> }>([
    'status',
    '--home',
    home.path,
  ]);
  const work = Object.entries(json.work).flatMap(([kind, statuses]) =>
    Object.entries(statuses).map(([state, n]) => [`work/${kind}/${state}`, n]),
  );
  expect(Object.fromEntries(work)).toEqual(
    Object.fromEntries(Object.entries(counts).filter(([key]) => key.startsWith('work/'))),
  );
  gw.close();

  // A clean stop leaves every checkpoint at the head, and the live view equals a rebuild.
  await serve.stop('SIGTERM');
  serve = undefined;
  const stopped = fileState();
  for (const [name, position] of Object.entries(stopped.checkpoints)) {
    expect({ name, position }).toEqual({ name, position: stopped.head });
  }
  const verify = await demiurge(['verify', '--home', home.path]);
  expect(verify.stderr).toBe('');
  expect(verify.stdout).toMatch(/^verify: ok/m);
  expect(verify.code).toBe(0);
});

it('a command that closes its store after commits operator-status does not handle leaves it at the head', async () => {
  // `run` hosts in-process and closes; `core save` then commits only core events (none of operator-status'
  // types). Before the fix the file said "operator-status is at position 24 of 26" after it.
  writeHostHome(home.path);
  const run = await demiurge(['run', 'hello', '--home', home.path]);
  expect(run.code, run.stderr).toBe(0);
  const afterRun = fileState();
  expect(afterRun.checkpoints['operator-status']).toBe(afterRun.head);
  const save = await demiurge(['core', 'save', '--home', home.path]);
  expect(save.code, save.stderr).toBe(0);
  const afterSave = fileState();
  expect(afterSave.head).toBeGreaterThan(afterRun.head);
  for (const [name, position] of Object.entries(afterSave.checkpoints)) {
    expect({ name, position }).toEqual({ name, position: afterSave.head });
  }
  const verify = await demiurge(['verify', '--home', home.path]);
  expect(verify.stdout).not.toMatch(/catches it up/);
  expect(verify.stdout).toMatch(/^verify: ok/m);
  expect(verify.code).toBe(0);
}, 60_000);
