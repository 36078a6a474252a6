import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { demiurge, demiurgeJson, tempHome } from './cli.js';
import { type Seeded, seedRuntime } from './seed.js';

// The work-items read model's second version (issue 16, fifth round) keeps one `queue` index per kind instead of
// version 1's `claimable`, `claimable-by-kind` and `leases`. A home written by version 1 is rebuilt by the first
// command that opens it (the projector's version moved), through the real CLI: the old collections are gone, the
// waiting item is in its kind's queue, and verify finds every projection equal to a fresh rebuild.

let home: ReturnType<typeof tempHome>;
let seeded: Seeded;
beforeEach(async () => {
  home = tempHome();
  seeded = await seedRuntime(home.path);
});
afterEach(() => home.remove());

const cli = (...args: string[]) => demiurge([...args, '--home', home.path]);
const dbPath = () => join(home.path, 'runtime', 'runtime.sqlite3');

interface Item {
  workId: string;
  kind: string;
  status: string;
  dueAt: string;
  leaseUntil: string | null;
}

/** Rewrites the file's work-items documents as version 1 wrote them, and its checkpoint's version to 1. */
function downgradeToVersion1(): void {
  const db = new Database(dbPath());
  try {
    db.transaction(() => {
      const items = db
        .prepare("SELECT doc FROM projection_documents WHERE projector = 'work-items' AND collection = 'items'")
        .pluck()
        .all()
        .map((doc) => JSON.parse(doc as string) as Item);
      db.prepare("DELETE FROM projection_documents WHERE projector = 'work-items' AND collection <> 'items'").run();
      const put = db.prepare("INSERT INTO projection_documents VALUES ('work-items', ?, ?, ?)");
      for (const item of items) {
        const waiting = { workId: item.workId, kind: item.kind, dueAt: item.dueAt };
        if (item.status === 'queued' || item.status === 'retry_scheduled') {
          put.run('claimable', `${item.dueAt}/${item.workId}`, JSON.stringify(waiting));
          put.run('claimable-by-kind', `${item.kind}/${item.dueAt}/${item.workId}`, JSON.stringify(waiting));
        } else if (item.leaseUntil !== null) {
          const lease = { workId: item.workId, kind: item.kind, status: item.status, leaseUntil: item.leaseUntil };
          put.run('leases', `${item.leaseUntil}/${item.workId}`, JSON.stringify(lease));
        }
      }
      db.prepare("UPDATE projector_checkpoints SET version = 1 WHERE name = 'work-items'").run();
    })();
  } finally {
    db.close();
  }
}

/** The work-items collections in the file, with their ids, and the projector's checkpoint version. */
function workItemsInFile(): { version: number; collections: Record<string, string[]> } {
  const db = new Database(dbPath(), { readonly: true });
  try {
    const rows = db
      .prepare("SELECT collection, id FROM projection_documents WHERE projector = 'work-items' ORDER BY collection, id")
      .all() as { collection: string; id: string }[];
    const collections: Record<string, string[]> = {};
    for (const { collection, id } of rows) collections[collection] = [...(collections[collection] ?? []), id];
    const version = db.prepare("SELECT version FROM projector_checkpoints WHERE name = 'work-items'").pluck().get();
    return { version: version as number, collections };
  } finally {
    db.close();
  }
}

it('a home written by work-items version 1 is rebuilt into the queue index by the first command that opens it', async () => {
  // The unknown delivery, retried by the operator, waits for a claim: an entry in the claim index.
  const resolved = await demiurgeJson<{ work: { status: string } }>([
    'work',
    'resolve',
    seeded.unknownWorkId,
    '--decision',
    'retry',
    '--retry-at',
    '2030-01-01T00:00:00Z',
    '--home',
    home.path,
  ]);
  expect(resolved.json.work).toMatchObject({ status: 'retry_scheduled' });
  downgradeToVersion1();
  const before = workItemsInFile();
  expect(before.version).toBe(1);
  expect(before.collections['claimable-by-kind']).toEqual([
    `delivery.send/2030-01-01T00:00:00.000Z/${seeded.unknownWorkId}`,
  ]);

  // `status` opens the home the usual way: the re-versioned projector is rebuilt from the log at open.
  const status = await cli('status');
  expect(status.stderr).toBe('');
  expect(status.code).toBe(0);
  const after = workItemsInFile();
  expect(after.version).toBe(2);
  for (const gone of ['claimable', 'claimable-by-kind', 'leases']) expect(after.collections).not.toHaveProperty(gone);
  expect(after.collections.queue).toContain(`delivery.send/wait/2030-01-01T00:00:00.000Z/${seeded.unknownWorkId}`);
  // The items themselves are what they were, and verify finds every projection equal to a fresh rebuild.
  expect(after.collections.items).toEqual(before.collections.items);
  const verified = await cli('verify');
  expect(verified.stderr).toBe('');
  expect(verified.stdout).toMatch(/^ok {4}projections: \d+ equal a fresh rebuild/m);
  expect(verified.code).toBe(0);
});
