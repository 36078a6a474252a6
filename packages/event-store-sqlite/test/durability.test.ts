import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CorruptDatabaseError, DatabaseNewerThanCodeError } from '@demiurge/event-store';
import { counterProjector, testEventRegistry } from '@demiurge/event-store/testing';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteEventStore, SCHEMA_VERSION } from '../src/index.js';
import { tempDir } from './temp-dir.js';

let dir: ReturnType<typeof tempDir>;
let path: string;
beforeEach(() => {
  dir = tempDir();
  path = join(dir.path, 'runtime', 'runtime.sqlite3');
});
afterEach(() => dir.remove());

const open = () => openSqliteEventStore({ path, registry: testEventRegistry, projectors: [counterProjector] });
const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

describe('sqlite durability settings', () => {
  it('creates the folder and file, and every connection runs WAL with synchronous=FULL', async () => {
    const store = await open();
    expect(existsSync(path)).toBe(true);
    expect(store.settings()).toEqual({ journalMode: 'wal', synchronous: 2, busyTimeoutMs: 5000, foreignKeys: true });
    await store.close();
    const again = await openSqliteEventStore({ path, registry: testEventRegistry, busyTimeoutMs: 1234 });
    expect(again.settings()).toMatchObject({ journalMode: 'wal', synchronous: 2, busyTimeoutMs: 1234 });
    await again.close();
  });

  it('refuses UPDATE and DELETE on events, even in raw SQL', async () => {
    const store = await open();
    await store.append({
      streamType: 'counter',
      streamId: 'a',
      expectedVersion: 'no_stream',
      events: [{ type: 'test.created', data: { name: 'a' } }],
    });
    await store.close();
    const raw = new Database(path);
    expect(() => raw.prepare("UPDATE events SET type = 'test.noted'").run()).toThrow(/append-only: UPDATE is refused/);
    expect(() => raw.prepare('DELETE FROM events').run()).toThrow(/append-only: DELETE is refused/);
    expect(raw.prepare('SELECT count(*) FROM events').pluck().get()).toBe(1);
    raw.close();
  });

  it('records the schema version', async () => {
    await (await open()).close();
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(raw.prepare('SELECT version, name FROM schema_migrations').all()).toEqual([
      { version: 1, name: '001_event_log' },
      { version: 2, name: '002_event_hash_chain' },
      { version: 3, name: '003_checkpoints_follow_head' },
    ]);
    raw.close();
  });
});

describe('sqlite fail-stop on files it must not touch', () => {
  it('stops on a garbage file and leaves it byte-identical', async () => {
    const file = join(dir.path, 'garbage.sqlite3');
    writeFileSync(file, Buffer.from('this is not a database, it is a shopping list\n'.repeat(200)));
    const before = sha(file);
    const err = await openSqliteEventStore({ path: file }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CorruptDatabaseError);
    expect((err as Error).message).toMatch(/garbage\.sqlite3 is not a usable Demiurge database \(not an SQLite file/);
    expect(sha(file)).toBe(before);
    expect(existsSync(`${file}-wal`)).toBe(false);
  });

  it('stops on a database written by a newer Demiurge and leaves it byte-identical', async () => {
    await (await open()).close();
    const raw = new Database(path);
    raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    const before = sha(path);
    const err = await open().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseNewerThanCodeError);
    expect(err).toMatchObject({ databaseVersion: SCHEMA_VERSION + 1, codeVersion: SCHEMA_VERSION });
    expect((err as Error).message).toMatch(/newer than this Demiurge understands/);
    expect(sha(path)).toBe(before);
  });

  it('stops on an SQLite database another program made', async () => {
    const file = join(dir.path, 'other.sqlite3');
    const raw = new Database(file);
    raw.exec('CREATE TABLE contacts (name TEXT)');
    raw.close();
    const before = sha(file);
    await expect(openSqliteEventStore({ path: file })).rejects.toThrow(/Demiurge did not create \(tables: contacts\)/);
    expect(sha(file)).toBe(before);
  });
});

describe('sqlite reads validate and upcast', () => {
  const insertRaw = (type: string, schemaVersion: number, data: unknown) => {
    const raw = new Database(path);
    raw
      .prepare(
        `INSERT INTO events (event_id, stream_type, stream_id, stream_version, type, schema_version, data, meta, recorded_at)
         VALUES ('evt_raw', 'counter', 'old', 1, ?, ?, ?, '{"actor":{"kind":"system","id":"x"}}', '2025-01-01T00:00:00.000Z')`,
      )
      .run(type, schemaVersion, JSON.stringify(data));
    raw.close();
  };

  it('upcasts data recorded under an older schema version', async () => {
    await (await open()).close();
    insertRaw('test.incremented', 1, { n: 3 });
    const store = await open();
    expect((await store.readStream('old'))[0]).toMatchObject({ schemaVersion: 2, data: { by: 3 } });
    expect(await store.projection('counter').get('totals', 'all')).toBe(3);
    await store.close();
  });

  it('names the bad field when a recorded event no longer validates', async () => {
    await (await open()).close();
    insertRaw('test.created', 1, { name: 42 });
    const store = await openSqliteEventStore({ path, registry: testEventRegistry });
    await expect(store.readAll()).rejects.toMatchObject({
      name: 'EventValidationError',
      type: 'test.created',
      path: ['name'],
    });
    await store.close();
  });
});
