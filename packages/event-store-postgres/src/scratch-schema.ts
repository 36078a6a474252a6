import pg from 'pg';
import { connectionError } from './connection.js';
import { redactUrl, StoreUnavailableError } from './store-unavailable.js';

/** A schema of its own in an existing database: a store opened on {@link ScratchSchema.url} lives in it alone. */
export interface ScratchSchema {
  /** The schema's name (`<prefix>_<pid>_<n>_<time>`). */
  readonly name: string;
  /** The database's URL with `options=-c search_path=<name>`: a store opened on it creates and reads its tables there. */
  readonly url: string;
  /** Drops the schema and everything in it (a store on it must be closed first). */
  drop(): Promise<void>;
}

let counter = 0;

/**
 * Creates a fresh, empty schema in the database at `url` (its user needs `CREATE` on that database) and gives a
 * URL that puts a store in it: several isolated logs in one database, without `CREATE DATABASE` (which needs
 * the privilege and costs far more). The simulator runs each scenario in one. Notifications are per database:
 * stores of other schemas of the same database wake each other's listeners (they read nothing new and go on).
 * @example
 * const scratch = await createScratchSchema('postgres://demiurge:secret@db/sim', 'demiurge_sim');
 * const store = await openPostgresEventStore({ url: scratch.url });
 * await store.close();
 * await scratch.drop();
 */
export async function createScratchSchema(url: string, prefix = 'demiurge_scratch'): Promise<ScratchSchema> {
  if (!/^[a-z_][a-z0-9_]*$/.test(prefix)) throw new Error(`schema prefix ${JSON.stringify(prefix)}: use a-z, 0-9, _`);
  const name = `${prefix}_${process.pid}_${++counter}_${Date.now().toString(36)}`;
  const scoped = new URL(url);
  const options = scoped.searchParams.get('options');
  scoped.searchParams.set('options', `${options ? `${options} ` : ''}-c search_path=${name}`);
  await run(url, `CREATE SCHEMA ${name}`);
  return { name, url: scoped.toString(), drop: () => run(url, `DROP SCHEMA IF EXISTS ${name} CASCADE`) };
}

/** One statement on a connection of its own; a server that cannot be used (or refuses it) is one StoreUnavailableError line. */
async function run(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
    await client.query(statement);
  } catch (err) {
    const named = connectionError(err, url);
    if (named !== err) throw named;
    // Connected, but refused (no CREATE on the database, say): still one line naming the server and why.
    throw new StoreUnavailableError(redactUrl(url), `${statement}: ${(err as Error).message}`, { cause: err });
  } finally {
    await client.end().catch(() => undefined);
  }
}
