import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dumpProjections, LogImportError, type StoredEventRecord } from '@demiurge/event-store';
import { counterProjector, testEventRegistry } from '@demiurge/event-store/testing';
import { openSqliteEventStore, openSqliteLogAdmin } from '@demiurge/event-store-sqlite';
import { expect, it } from 'vitest';
import { openPostgresEventStore, openPostgresLogAdmin } from '../src/index.js';
import { testServer } from './test-server.js';

const { server, describePg } = await testServer();
const options = { registry: testEventRegistry, projectors: [counterProjector] };

/** A SQLite log of three streams (idempotency keys included) and its stored records. */
async function sqliteRecords(dir: string): Promise<{ records: StoredEventRecord[]; path: string }> {
  const path = join(dir, 'source.sqlite3');
  const store = await openSqliteEventStore({ ...options, path });
  for (let s = 0; s < 3; s++) {
    await store.append(
      {
        streamType: 'counter',
        streamId: `c-${s}`,
        expectedVersion: 'no_stream',
        events: [
          { type: 'test.created', data: { name: `c${s}` } },
          { type: 'test.incremented', data: { by: s + 1 } },
        ],
      },
      { idempotencyKey: `k-${s}` },
    );
  }
  await store.close();
  const admin = openSqliteLogAdmin(path, { registry: testEventRegistry });
  const records: StoredEventRecord[] = [];
  for await (const r of admin.records()) records.push(r);
  await admin.close();
  return { records, path };
}

describePg('openPostgresLogAdmin', () => {
  it('imports a SQLite log keeping positions, keys and the chain; the next open builds equal projections', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'demiurge-pg-import-'));
    const url = await server!.createDatabase();
    try {
      const { records, path } = await sqliteRecords(dir);
      await (await openPostgresEventStore({ ...options, url })).close(); // creates the schema
      const admin = await openPostgresLogAdmin(url, { registry: testEventRegistry });
      await admin.importRecords(records.slice(0, 4));
      await admin.importRecords(records.slice(4));
      const copied: StoredEventRecord[] = [];
      for await (const r of admin.records({ batchSize: 4 })) copied.push(r);
      await expect(admin.importRecords([{ ...records[0]!, position: 7 }])).rejects.toThrow(
        /position 7: stream c-0 is at version 2, this event has version 1/,
      );
      await admin.close();
      expect(copied).toEqual(records);
      const sqlite = await openSqliteEventStore({ ...options, path });
      const pg = await openPostgresEventStore({ ...options, url });
      try {
        expect(await pg.chainHead()).toEqual(await sqlite.chainHead());
        expect(await dumpProjections(pg)).toEqual(await dumpProjections(sqlite));
        expect((await pg.verifyChain()).ok).toBe(true);
        const replay = await pg.append(
          {
            streamType: 'counter',
            streamId: 'c-1',
            expectedVersion: 'no_stream',
            events: [{ type: 'test.created', data: { name: 'c1' } }],
          },
          { idempotencyKey: 'k-1' },
        );
        expect(replay.events.map((e) => e.position)).toEqual([3, 4]);
        // a normal append continues the imported chain
        await pg.append({
          streamType: 'counter',
          streamId: 'c-9',
          expectedVersion: 'no_stream',
          events: [{ type: 'test.created', data: { name: 'c9' } }],
        });
        expect(await pg.head()).toBe(7);
        expect((await pg.verifyChain()).ok).toBe(true);
      } finally {
        await sqlite.close();
        await pg.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await server!.dropDatabase(url);
    }
  }, 60_000);

  it('refuses a changed event and a gap, writing nothing of the batch', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'demiurge-pg-import-'));
    const url = await server!.createDatabase();
    try {
      const { records } = await sqliteRecords(dir);
      await (await openPostgresEventStore({ ...options, url })).close();
      const admin = await openPostgresLogAdmin(url, { registry: testEventRegistry });
      const changed = admin.importRecords([records[0]!, { ...records[1]!, meta: '{}' }]);
      await expect(changed).rejects.toThrow(LogImportError);
      await expect(changed).rejects.toThrow(/position 2: its hash does not chain/);
      await expect(admin.importRecords([records[1]!])).rejects.toThrow(/position 2: positions must follow/);
      expect((await admin.head()).position).toBe(0);
      await admin.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await server!.dropDatabase(url);
    }
  }, 60_000);
});
