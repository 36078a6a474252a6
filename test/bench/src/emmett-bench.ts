import { join } from 'node:path';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { BENCH_TYPE, benchData, benchRegistry, STREAM_TYPE } from './fixtures.js';
import { interleave, type Workload } from './interleave.js';
import { StreamSet } from './streams.js';
import { withTempDir } from './temp-dir.js';

/**
 * Sequential single-event appends (each awaited) round-robin over `streams` streams with their expected
 * versions, the same payloads, WAL and `synchronous=FULL` on both sides: this store (no projector) against
 * Emmett's SQLite event store (`@event-driven-io/emmett-sqlite`, one singleton connection, no projection).
 */
export async function benchVersusEmmett(count: number, streams: number): Promise<{ store: number; emmett: number }> {
  // Imported here: Emmett rides on the native `sqlite3` package, and a machine where it did not build should
  // lose this row only (main.ts reports why), not the whole bench.
  const { getSQLiteEventStore, sqliteConnection } = await import('@event-driven-io/emmett-sqlite');
  return withTempDir('emmett', async (dir) => {
    const store = await openSqliteEventStore({ path: join(dir, 'store.sqlite3'), registry: benchRegistry });
    const fileName = join(dir, 'emmett.sqlite3');
    const connection = sqliteConnection({ fileName });
    try {
      const emmett = getSQLiteEventStore({
        fileName,
        schema: { autoMigration: 'CreateOrUpdate' },
        connectionOptions: { singleton: true, connection },
      });
      // node-sqlite3 defaults to FULL already; set it so both sides say the same.
      await connection.command('PRAGMA synchronous = FULL');
      const ours = new StreamSet(streams);
      const theirs = new StreamSet(streams);
      let seqA = 0;
      let seqB = 0;
      const storeSide: Workload = async (n) => {
        for (let k = 0; k < n; k++) {
          const i = ours.next();
          await store.append({
            streamType: STREAM_TYPE,
            streamId: ours.ids[i]!,
            expectedVersion: ours.versions[i] === 0 ? 'no_stream' : ours.versions[i]!,
            events: [{ type: BENCH_TYPE, data: benchData(seqA++) }],
          });
          ours.versions[i]!++;
        }
      };
      const emmettSide: Workload = async (n) => {
        for (let k = 0; k < n; k++) {
          const i = theirs.next();
          await emmett.appendToStream(theirs.ids[i]!, [{ type: BENCH_TYPE, data: { ...benchData(seqB++) } }], {
            expectedStreamVersion: BigInt(theirs.versions[i]!),
          });
          theirs.versions[i]!++;
        }
      };
      const t = await interleave(storeSide, emmettSide, count, 8, Math.min(200, Math.ceil(count / 10)));
      return { store: t.a, emmett: t.b };
    } finally {
      await store.close();
      connection.close();
    }
  });
}
