import { join } from 'node:path';
import { StoreBusyError } from '@demiurge/event-store';
import { counterProjector, testEventRegistry } from '@demiurge/event-store/testing';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openSqliteEventStore, type SqliteEventStore } from '../src/index.js';
import { tempDir } from './temp-dir.js';

// The writer commits synchronously when it can; a database another connection holds locked sends it down the
// retry path (backoff, then StoreBusyError after busyRetryMs). Both paths, with the lock held by a real second
// connection on the same file.
let dir: ReturnType<typeof tempDir>;
let store: SqliteEventStore;
let other: Database.Database;
beforeEach(async () => {
  dir = tempDir();
  const path = join(dir.path, 'busy.sqlite3');
  store = await openSqliteEventStore({
    path,
    registry: testEventRegistry,
    projectors: [counterProjector],
    busyTimeoutMs: 10,
    busyRetryMs: 400,
  });
  other = new Database(path);
});
afterEach(async () => {
  if (other.inTransaction) other.exec('ROLLBACK');
  other.close();
  await store.close();
  dir.remove();
});

const note = (streamId: string) =>
  store.append({
    streamType: 'note',
    streamId,
    expectedVersion: 'no_stream',
    events: [{ type: 'test.noted', data: { text: streamId } }],
  });

it('retries while another connection holds the write lock, and commits once it is released', async () => {
  other.exec('BEGIN IMMEDIATE');
  const pending = note('n1');
  await new Promise((r) => setTimeout(r, 100));
  other.exec('COMMIT');
  const result = await pending;
  expect(result.events.map((e) => e.streamId)).toEqual(['n1']);
  expect((await store.readAll()).length).toBe(1);
  // Committed synchronously again once the lock is free.
  expect((await note('n2')).lastPosition).toBe(2);
});

it('gives up with StoreBusyError after busyRetryMs, writing nothing', async () => {
  other.exec('BEGIN IMMEDIATE');
  const error = await note('n1').catch((e: unknown) => e);
  expect(error).toBeInstanceOf(StoreBusyError);
  other.exec('ROLLBACK');
  expect(await store.readAll()).toEqual([]);
  expect((await note('n1')).lastPosition).toBe(1);
});
