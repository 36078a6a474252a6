import { createHash } from 'node:crypto';
import pg from 'pg';
import { redactUrl, StoreUnavailableError } from './store-unavailable.js';

// The error and the redaction live apart from the driver: a process that only names a PostgreSQL store (or
// converts its errors) does not load `pg`.
export { redactUrl, StoreUnavailableError };

// bigint columns (positions) come back as numbers: positions stay far below 2^53.
const INT8 = 20;
const parsers: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8
      ? (v: string) => Number(v)
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

export interface PoolOptions {
  readonly url: string;
  /** Connections in the pool (reads and the one append in flight). Default 4. */
  readonly maxConnections?: number;
  readonly connectTimeoutMs?: number;
  /** Named (server-side prepared) statements for parameterized queries. Default true. */
  readonly preparedStatements?: boolean;
}

/** Distinct statement texts a connection prepares at most; later new texts run unnamed. */
const MAX_PREPARED_PER_CONNECTION = 256;

/**
 * A client that sends every parameterized query as a named prepared statement, named by a hash of its text:
 * PostgreSQL parses and plans it once per connection instead of on every call (an append's statements took half
 * as long prepared, measured by the PostgreSQL benchmarks). The store's query texts are fixed (values are always
 * parameters, arrays for many rows), so a connection prepares a bounded set; past
 * {@link MAX_PREPARED_PER_CONNECTION} texts it stops preparing new ones. Statements without parameters (BEGIN,
 * COMMIT, DDL) go unnamed as before.
 */
class PreparingClient extends pg.Client {
  private readonly prepared = new Set<string>();

  // biome-ignore lint/suspicious/noExplicitAny: pg's query overloads; only (text, values) is rewritten.
  override query(config: any, values?: any, callback?: any): any {
    if (typeof config === 'string' && Array.isArray(values) && values.length > 0 && callback === undefined) {
      const name = `dm_${createHash('sha1').update(config).digest('base64url').slice(0, 24)}`;
      if (this.prepared.has(name) || this.prepared.size < MAX_PREPARED_PER_CONNECTION) {
        this.prepared.add(name);
        return super.query({ name, text: config, values });
      }
    }
    return super.query(config, values, callback);
  }
}

/** A pool whose idle-connection errors are reported, not thrown into the process. */
export function createPool(options: PoolOptions, onIdleError: (err: Error) => void): pg.Pool {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.maxConnections ?? 4,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    types: parsers,
    application_name: 'demiurge',
    // Pipeline mode: queries issued back to back are written together (an append's BEGIN with its first
    // statement, its last statement with COMMIT: see pipelined-transaction.ts); awaited queries run as before.
    pipeline: true,
    ...(options.preparedStatements === false ? {} : { Client: PreparingClient }),
  });
  pool.on('error', onIdleError);
  if (options.preparedStatements !== false) {
    // A prepared statement keeps the generic plan PostgreSQL made on its sixth run, often while the tables were
    // tiny: a sequential scan then, which stays a scan of the whole log or of every document on each append as
    // the tables grow (until an ANALYZE replans it). The store's statements all find their rows by key or range,
    // so its connections plan with sequential scans discouraged: an index path wins whenever there is one. The
    // SET is queued before the connection's first query. (Unnamed statements, `preparedStatements: false`, are
    // planned on each run with their values and need nothing.)
    //
    // And they plan once: PostgreSQL's default (`plan_cache_mode = auto`) compares the generic plan's estimate
    // with the custom plans' and, for statements over `unnest` of array parameters (estimated at 10 rows when the
    // array is a parameter, at its real length when it is a value), judged the custom plan cheaper and planned the
    // append's statements again on every run: 0.2-0.3 ms of server CPU per statement, as much as running them
    // (`pg_stat_statements` with `track_planning`, issue 17 wave 11). Their plans do not depend on the values (keys
    // and ranges, index paths), so the generic plan is the plan.
    pool.on('connect', (client) => {
      client
        .query(
          "SELECT set_config('enable_seqscan', 'off', false), set_config('plan_cache_mode', 'force_generic_plan', false)",
        )
        .catch(() => {});
    });
  }
  return pool;
}

/** A client of its own (the LISTEN connection), with the same settings as the pool's. */
export function createClient(options: PoolOptions): pg.Client {
  return new pg.Client({
    connectionString: options.url,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    types: parsers,
    application_name: 'demiurge-listen',
  });
}

/**
 * Turns a connection failure into a {@link StoreUnavailableError} that says what happened in one line:
 * refused, unreachable, bad credentials, missing database. Other errors pass through unchanged.
 */
export function connectionError(err: unknown, url: string): unknown {
  const where = redactUrl(url);
  const e = err as { code?: string; message?: string };
  const user = (() => {
    try {
      return decodeURIComponent(new URL(url).username) || 'the default user';
    } catch {
      return 'the user';
    }
  })();
  const reason = (() => {
    switch (e?.code) {
      case 'ECONNREFUSED':
        return 'connection refused (is PostgreSQL running and listening on that host and port?)';
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
        return 'the host name does not resolve';
      case 'ETIMEDOUT':
      case 'EHOSTUNREACH':
      case 'ENETUNREACH':
        return 'the server cannot be reached';
      case '28P01':
        return `password authentication failed for user "${user}"`;
      case '28000':
        return `the server refused user "${user}": ${e.message}`;
      case '3D000':
        return `${e.message} (create it first)`;
      case '57P03':
        return 'the server is starting up or shutting down; try again';
      case '53300':
        return 'the server has no free connection slots (max_connections)';
      default:
        if (e?.message && /timeout expired|Connection terminated due to connection timeout/i.test(e.message)) {
          return 'the connection timed out';
        }
        return undefined;
    }
  })();
  return reason === undefined ? err : new StoreUnavailableError(where, reason, { cause: err });
}
