import { domainEvents, type EventRegistry } from '@demiurge/contracts';
import {
  CorruptDatabaseError,
  type LogAdmin,
  type LogHead,
  LogImportError,
  type StreamHeadInfo,
} from '@demiurge/event-store';
import {
  chainImportRecord,
  STORED_EVENT_COLUMNS,
  type StoredEventRow,
  storedRecordOf,
} from '@demiurge/event-store/adapter';
import type pg from 'pg';
import { connectionError, createPool, redactUrl } from './connection.js';
import { GENESIS_HASH } from './hash-chain.js';
import { EVENTS_CHANNEL } from './log-publisher.js';

const COLUMNS = STORED_EVENT_COLUMNS;
type StoredRow = StoredEventRow;

/**
 * The {@link LogAdmin} of a PostgreSQL store, on a small pool of its own. The schema must exist (open the
 * store once first: it migrates). An import takes the log-head lock like an append, inserts the events with
 * their recorded positions and hashes and moves the head; projector checkpoints stay where they were, so the
 * next store open (or a rebuild) builds the projections from the imported log.
 * @example
 * const admin = await openPostgresLogAdmin('postgres://demiurge@db/demiurge');
 * await admin.importRecords(batch);
 */
export async function openPostgresLogAdmin(
  url: string,
  options: { registry?: EventRegistry; connectTimeoutMs?: number } = {},
): Promise<LogAdmin> {
  const registry = options.registry ?? domainEvents;
  const where = redactUrl(url);
  const pool = createPool(
    { url, maxConnections: 2, ...(options.connectTimeoutMs ? { connectTimeoutMs: options.connectTimeoutMs } : {}) },
    () => {},
  );
  try {
    const { rows } = await pool.query<{ ok: string | null }>(`SELECT to_regclass('log_head')::text AS ok`);
    if (!rows[0]?.ok) throw new CorruptDatabaseError(where, 'it has no Demiurge event log; open the store first');
  } catch (err) {
    await pool.end();
    throw connectionError(err, url);
  }
  const head = async (client: pg.Pool | pg.PoolClient): Promise<{ position: number; hash: Buffer }> => {
    const { rows } = await client.query<{ position: number; hash: Buffer }>('SELECT position, hash FROM log_head');
    return rows[0] ?? { position: 0, hash: GENESIS_HASH };
  };
  return {
    where,
    head: async () => {
      const h = await head(pool);
      return { position: h.position, hash: h.hash.toString('hex') };
    },
    async *records(opts = {}) {
      const size = opts.batchSize ?? 1000;
      let after = 0;
      for (;;) {
        const { rows } = await pool.query<StoredRow>(
          `SELECT ${COLUMNS} FROM events WHERE position > $1 ORDER BY position LIMIT $2`,
          [after, size],
        );
        for (const row of rows) yield storedRecordOf(row);
        if (rows.length < size) return;
        after = rows[rows.length - 1]!.position;
      }
    },
    async importRecords(records): Promise<LogHead> {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const locked = await client.query<{ position: number; hash: Buffer }>(
          'SELECT position, hash FROM log_head FOR UPDATE',
        );
        let chain = locked.rows[0] ?? { position: 0, hash: GENESIS_HASH };
        const streams = new Map<string, StreamHeadInfo>();
        const ids = [...new Set(records.map((r) => r.streamId))];
        const known = await client.query<{ stream_id: string; stream_version: number; stream_type: string }>(
          `SELECT DISTINCT ON (stream_id) stream_id, stream_version, stream_type FROM events
            WHERE stream_id = ANY($1::text[]) ORDER BY stream_id, stream_version DESC`,
          [ids],
        );
        for (const row of known.rows) {
          streams.set(row.stream_id, { version: row.stream_version, streamType: row.stream_type });
        }
        const rows: StoredRow[] = [];
        for (const record of records) {
          const { row, hash } = chainImportRecord(record, chain, streams.get(record.streamId), registry);
          rows.push({ ...row, hash });
          streams.set(record.streamId, { version: record.streamVersion, streamType: record.streamType });
          chain = { position: record.position, hash };
        }
        if (rows.length > 0) {
          const column = <K extends keyof StoredRow>(k: K) => rows.map((r) => r[k]);
          try {
            await client.query(
              `INSERT INTO events (${COLUMNS})
                SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::integer[], $6::text[],
                  $7::integer[], $8::text[], $9::text[], $10::text[], $11::text[], $12::bytea[])`,
              [
                column('position'),
                column('event_id'),
                column('stream_type'),
                column('stream_id'),
                column('stream_version'),
                column('type'),
                column('schema_version'),
                column('data'),
                column('meta'),
                column('recorded_at'),
                column('idempotency_key'),
                column('hash'),
              ],
            );
          } catch (err) {
            throw new LogImportError(rows[0]!.position, (err as Error).message);
          }
          await client.query(`UPDATE log_head SET position = $1, hash = $2`, [chain.position, chain.hash]);
          await client.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, String(chain.position)]);
        }
        await client.query('COMMIT');
        return { position: chain.position, hash: chain.hash.toString('hex') };
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}
