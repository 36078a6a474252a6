import { counterProjector, testEventRegistry } from '@demiurge/event-store/testing';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { type ChainedRow, eventHash, GENESIS_HASH, openSqliteEventStore, type SqliteEventStore } from '../src/index.js';
import { storeFileEachTest } from './temp-dir.js';

let path: string;
storeFileEachTest((file) => {
  path = file;
});

const open = () => openSqliteEventStore({ path, registry: testEventRegistry, projectors: [counterProjector] });

/** Ten streams of three events, half of them in one group commit with a conflicting append among them. */
async function fill(store: SqliteEventStore): Promise<void> {
  for (let s = 0; s < 5; s++) {
    await store.append(
      {
        streamType: 'counter',
        streamId: `c-${s}`,
        expectedVersion: 'no_stream',
        events: [
          { type: 'test.created', data: { name: `c${s}` } },
          { type: 'test.incremented', data: { by: s } },
          { type: 'test.noted', data: { text: `note ${s}` } },
        ],
      },
      { idempotencyKey: `k-${s}`, meta: { actor: { kind: 'user', id: 'alice' } } },
    );
  }
  const together = await Promise.allSettled([
    ...Array.from({ length: 5 }, (_, i) =>
      store.append({
        streamType: 'counter',
        streamId: `g-${i}`,
        expectedVersion: 'no_stream',
        events: [
          { type: 'test.created', data: { name: `g${i}` } },
          { type: 'test.incremented', data: { by: 1 } },
          { type: 'test.incremented', data: { by: 2 } },
        ],
      }),
    ),
    store.append({
      streamType: 'counter',
      streamId: 'c-0',
      expectedVersion: 'no_stream',
      events: [{ type: 'test.created', data: { name: 'dup' } }],
    }),
  ]);
  expect(together.map((r) => r.status)).toEqual([...Array(5).fill('fulfilled'), 'rejected']);
  // a replayed idempotency key appends nothing and leaves the chain as it was
  await store.append(
    {
      streamType: 'counter',
      streamId: 'c-0',
      expectedVersion: 'no_stream',
      events: [{ type: 'test.created', data: { name: 'c0' } }],
    },
    { idempotencyKey: 'k-0' },
  );
}

/** Runs `sql` on the events table behind the store's back: drop the trigger, change, recreate it. */
function behindTheTriggers(sql: string, ...params: unknown[]): void {
  const raw = new Database(path);
  const triggers = raw
    .prepare("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'events'")
    .pluck()
    .all() as string[];
  raw.exec('DROP TRIGGER events_refuse_update; DROP TRIGGER events_refuse_delete');
  raw.prepare(sql).run(...params);
  for (const t of triggers) raw.exec(t);
  raw.close();
}

describe('the hash chain', () => {
  it('chains every appended event, group commits and rolled-back savepoints included', async () => {
    const store = await open();
    await fill(store);
    const report = await store.verifyChain({ batchSize: 4 });
    expect(report).toMatchObject({ ok: true, eventsChecked: 30, head: { position: 30 } });
    expect(report.head.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(await store.chainHead()).toEqual(report.head);
    await store.close();
  });

  it('an empty log has the genesis head', async () => {
    const store = await open();
    expect(await store.verifyChain()).toEqual({
      ok: true,
      eventsChecked: 0,
      head: { position: 0, hash: '0'.repeat(64) },
    });
    await store.close();
  });

  for (const [what, sql, position] of [
    ['data', "UPDATE events SET data = json_set(data, '$.text', 'forged') WHERE position = 12", 12],
    ['meta.actor', `UPDATE events SET meta = json_set(meta, '$.actor.id', 'mallory') WHERE position = 7`, 7],
    ['recorded_at', "UPDATE events SET recorded_at = '2020-01-01T00:00:00.000Z' WHERE position = 20", 20],
    ['the stored hash', 'UPDATE events SET hash = zeroblob(32) WHERE position = 3', 3],
  ] as const) {
    it(`names the first position whose ${what} was edited behind the triggers`, async () => {
      await (async () => {
        const store = await open();
        await fill(store);
        await store.close();
      })();
      behindTheTriggers(sql);
      const store = await open();
      expect(await store.verifyChain({ batchSize: 5 })).toMatchObject({
        ok: false,
        firstBreak: {
          position,
          reason: expect.stringMatching(/does not match its recorded hash: it was changed after it was appended/),
        },
      });
      await store.close();
    });
  }

  it('names a removed event', async () => {
    const store = await open();
    await fill(store);
    await store.close();
    behindTheTriggers('DELETE FROM events WHERE position IN (8, 9)');
    const again = await open();
    expect((await again.verifyChain()).firstBreak).toEqual({
      position: 10,
      reason: 'positions 8-9 missing before it: events were removed from the log',
    });
    await again.close();
  });

  it('a kept head shows the newest events cut off, or a chain recomputed end to end, which the chain alone cannot', async () => {
    const store = await open();
    await fill(store);
    await store.close();
    // heads as an operator would have kept them when the log ended at 10 and at 20
    const raw = new Database(path, { readonly: true });
    const keptAt = (position: number) => ({
      position,
      hash: (
        raw.prepare('SELECT hex(hash) FROM events WHERE position = ?').pluck().get(position) as string
      ).toLowerCase(),
    });
    const [kept10, kept] = [keptAt(10), keptAt(20)];
    raw.close();

    const intact = await open();
    expect((await intact.verifyChain({ kept })).kept).toEqual({ head: kept, ok: true });
    await intact.close();

    behindTheTriggers('DELETE FROM events WHERE position > 15');
    const cut = await open();
    const afterCut = await cut.verifyChain({ kept });
    expect(afterCut).toMatchObject({ ok: false, eventsChecked: 15 });
    expect(afterCut.firstBreak).toBeUndefined();
    expect(afterCut.kept).toEqual({
      head: kept,
      ok: false,
      reason: 'the log ends at position 15: the events after it were cut off',
    });
    await cut.close();

    // an edit at position 3, then every hash from there recomputed: the chain verifies, the kept head does not
    behindTheTriggers("UPDATE events SET meta = json_set(meta, '$.actor.id', 'mallory') WHERE position = 3");
    const rewrite = new Database(path);
    rewrite.exec('DROP TRIGGER events_refuse_update');
    let previous = GENESIS_HASH;
    for (const row of rewrite.prepare('SELECT * FROM events ORDER BY position').all() as ChainedRow[]) {
      previous = eventHash(previous, row);
      rewrite.prepare('UPDATE events SET hash = ? WHERE position = ?').run(previous, row.position);
    }
    rewrite.close();
    const rewritten = await open();
    const report = await rewritten.verifyChain({ kept: kept10 });
    expect(report.firstBreak).toBeUndefined();
    expect(report.kept).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/has another hash: the chain was recomputed/),
    });
    await rewritten.close();
  });

  it('migration 2 backfills the chain of a store made before it, to the very hashes an append computes', async () => {
    const store = await open();
    await fill(store);
    const head = await store.chainHead();
    await store.close();
    const raw = new Database(path);
    raw.exec(`DROP TRIGGER events_refuse_update; ALTER TABLE events DROP COLUMN hash;
      CREATE TRIGGER events_refuse_update BEFORE UPDATE ON events
      BEGIN SELECT RAISE(ABORT, 'events is append-only: UPDATE is refused'); END;
      ALTER TABLE projector_checkpoints DROP COLUMN follows_head;
      DELETE FROM schema_migrations WHERE version >= 2; PRAGMA user_version = 1;`);
    raw.close();
    const migrated = await open();
    expect(await migrated.verifyChain()).toEqual({ ok: true, eventsChecked: 30, head });
    await migrated.close();
    const after = new Database(path, { readonly: true });
    expect(() => after.prepare('SELECT 1').get()).not.toThrow();
    expect(after.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'events_refuse_update'").pluck().get()).toBe(
      1,
    );
    after.close();
    const refused = new Database(path);
    expect(() => refused.prepare("UPDATE events SET type = 'x'").run()).toThrow(/UPDATE is refused/);
    refused.close();
  });
});
