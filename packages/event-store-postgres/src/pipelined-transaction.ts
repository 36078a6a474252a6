import { type CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import type { StoreSchema } from './schema.js';

/**
 * One transaction on one pooled connection whose `BEGIN` goes out with its first statement and whose `COMMIT`
 * goes out with its last one: the pool's clients run in `pg`'s pipeline mode, so two queries issued one after
 * the other are written together and answered in order, one round trip for both. Statements in between run
 * through `tx` (Kysely on the same connection), each awaited.
 */
export interface PipelinedTransaction {
  /** Kysely on this transaction's connection. */
  readonly tx: Kysely<StoreSchema>;
  /** Sends `BEGIN` and `first` together; the rows of `first`. */
  begin<R>(first: CompiledQuery<R>): Promise<R[]>;
  /** Sends `last` and `COMMIT` together; the rows of `last`. A failure of `last` rolls the transaction back. */
  commit<R>(last: CompiledQuery<R>): Promise<R[]>;
  /** Sends `BEGIN`, `only` and `COMMIT` together (one round trip): a transaction of one statement. */
  alone<R>(only: CompiledQuery<R>): Promise<R[]>;
}

/** A pooled client as Kysely's driver wants it: queries forwarded, `release` left to {@link PipelinedTransactions}. */
type Forwarding = Pick<pg.PoolClient, 'query'> & { release(): void };

/**
 * Runs pipelined transactions on a pool (one at a time per store: appends are serialized anyway). A failure
 * rolls back what is open and hands the error on; a connection that broke is dropped from the pool.
 */
export class PipelinedTransactions {
  private current: Forwarding | undefined;
  /** One forwarding object per pooled client, so Kysely keeps one connection object per client. */
  private readonly forwarding = new WeakMap<pg.PoolClient, Forwarding>();
  private readonly tx: Kysely<StoreSchema>;

  constructor(private readonly pool: pg.Pool) {
    const connect = async () => {
      if (!this.current) throw new Error('no pipelined transaction is running');
      return this.current;
    };
    this.tx = new Kysely<StoreSchema>({
      dialect: new PostgresDialect({ pool: { connect, end: async () => {} } as unknown as pg.Pool }),
    });
  }

  async run<T>(work: (t: PipelinedTransaction) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let forwarding = this.forwarding.get(client);
    if (!forwarding) {
      forwarding = { query: client.query.bind(client) as pg.PoolClient['query'], release: () => {} };
      this.forwarding.set(client, forwarding);
    }
    this.current = forwarding;
    let open = false;
    let broken: Error | undefined;
    const rowsOf = <R>(result: unknown) => (result as pg.QueryResult).rows as R[];
    const send = <R>(query: CompiledQuery<R>) => client.query(query.sql, [...query.parameters]);
    const transaction: PipelinedTransaction = {
      tx: this.tx,
      begin: async <R>(first: CompiledQuery<R>) => {
        const [begun, rows] = together(client, () => [client.query('BEGIN'), send(first)] as const);
        open = true;
        const [started, read] = await Promise.allSettled([begun, rows]);
        if (started.status === 'rejected') throw started.reason;
        if (read.status === 'rejected') throw read.reason;
        return rowsOf<R>(read.value);
      },
      commit: async <R>(last: CompiledQuery<R>) => {
        const [rows, committed] = together(client, () => [send(last), client.query('COMMIT')] as const);
        // Whatever happens next, the COMMIT ends the transaction (a failed one with a ROLLBACK).
        open = false;
        const [sent, ended] = await Promise.allSettled([rows, committed]);
        if (sent.status === 'rejected') throw sent.reason;
        if (ended.status === 'rejected') throw ended.reason;
        if (ended.value.command === 'ROLLBACK') throw new Error('the transaction was rolled back at COMMIT');
        return rowsOf<R>(sent.value);
      },
      alone: async <R>(only: CompiledQuery<R>) => {
        const [begun, rows, committed] = together(
          client,
          () => [client.query('BEGIN'), send(only), client.query('COMMIT')] as const,
        );
        const [started, sent, ended] = await Promise.allSettled([begun, rows, committed]);
        if (started.status === 'rejected') throw started.reason;
        if (sent.status === 'rejected') throw sent.reason;
        if (ended.status === 'rejected') throw ended.reason;
        if (ended.value.command === 'ROLLBACK') throw new Error('the transaction was rolled back at COMMIT');
        return rowsOf<R>(sent.value);
      },
    };
    try {
      const result = await work(transaction);
      if (open) {
        open = false;
        await client.query('COMMIT');
      }
      return result;
    } catch (err) {
      if (open) {
        await client.query('ROLLBACK').catch((e: Error) => {
          broken = e;
        });
      }
      throw err;
    } finally {
      this.current = undefined;
      client.release(broken);
    }
  }
}

/** The part of a `pg` client's connection that {@link together} uses (not in `pg`'s types). */
interface Corkable {
  readonly connection?: { readonly stream?: { cork?(): void; uncork?(): void } };
}

/**
 * Issues two pipelined queries in one write: the socket is corked while both are submitted (pipeline mode writes
 * each as it is issued), so `BEGIN` and the locking statement (or the last statement and `COMMIT`) leave in one
 * `writev` and reach the server in one packet: one system call and one wake-up of the server instead of two.
 */
function together<T>(client: pg.PoolClient, issue: () => T): T {
  const stream = (client as unknown as Corkable).connection?.stream;
  stream?.cork?.();
  try {
    return issue();
  } finally {
    stream?.uncork?.();
  }
}
