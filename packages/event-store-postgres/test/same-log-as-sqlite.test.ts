import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFakeClock, createSeededIdGenerator } from '@demiurge/contracts/testing';
import type { AppendStream } from '@demiurge/event-store';
import { counterProjector, notesProjector, testEventRegistry } from '@demiurge/event-store/testing';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { expect, it } from 'vitest';
import { openPostgresEventStore } from '../src/index.js';
import { testServer } from './test-server.js';

const { server, describePg } = await testServer();

describePg('the same log as SQLite', () => {
  it('the same appends give the same events, the same hash chain and the same projections on both backends', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'demiurge-pg-vs-sqlite-'));
    const options = () => {
      const clock = createFakeClock();
      return {
        registry: testEventRegistry,
        projectors: [counterProjector, notesProjector],
        clock,
        ids: createSeededIdGenerator(clock, 5),
      };
    };
    const sqlite = await openSqliteEventStore({ ...options(), path: join(dir, 'runtime.sqlite3') });
    const pg = await openPostgresEventStore({ ...options(), url: await server!.createDatabase() });
    try {
      const appends: { streams: AppendStream[]; key?: string }[] = [
        {
          streams: [
            {
              streamType: 'counter',
              streamId: 'a',
              expectedVersion: 'no_stream',
              events: [{ type: 'test.created', data: { name: 'a' } }],
            },
          ],
        },
        {
          streams: [
            {
              streamType: 'counter',
              streamId: 'a',
              expectedVersion: 1,
              events: [{ type: 'test.incremented', data: { by: 2 } }],
            },
            {
              streamType: 'note',
              streamId: 'n',
              expectedVersion: 'any',
              events: [{ type: 'test.noted', data: { text: 'ünïcødé "quoted" \\ 🎉' } }],
            },
          ],
          key: 'two-streams',
        },
        {
          streams: [
            {
              streamType: 'counter',
              streamId: 'a',
              expectedVersion: 'any',
              events: [{ type: 'test.incremented', data: { by: -1 } }],
            },
          ],
        },
      ];
      for (const { streams, key } of appends) {
        const opts = key === undefined ? undefined : { idempotencyKey: key };
        const [s, p] = [await sqlite.append(streams, opts), await pg.append(streams, opts)];
        expect(p).toEqual(s);
      }
      expect(await pg.readAll()).toEqual(await sqlite.readAll());
      const [sqliteHead, pgHead] = [await sqlite.chainHead(), await pg.chainHead()];
      expect(pgHead).toEqual(sqliteHead);
      expect(pgHead.position).toBe(4);
      expect(await pg.verifyChain({ kept: sqliteHead })).toMatchObject({ ok: true, eventsChecked: 4 });
      for (const name of ['counter', 'notes']) {
        expect(await pg.projection(name).dump()).toEqual(await sqlite.projection(name).dump());
        expect(await pg.projection(name).checkpoint()).toEqual(await sqlite.projection(name).checkpoint());
      }
    } finally {
      await sqlite.close();
      await pg.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
