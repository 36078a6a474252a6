import { once } from 'node:events';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { isDeepStrictEqual } from 'node:util';
import { dumpProjections, type StoredEventRecord } from '@demiurge/event-store';
import { describeStore, loadConfig, type StoreSelection, storeSelection } from '@demiurge/host';
import { ExitCode, UsageError } from '../cli-errors.js';
import type { HomePaths } from '../home.js';
import type { CommandIo } from '../io.js';
import { assertEmptyTarget, importInto, storedRecords, withStore } from '../log-transfer.js';
import { NoDatabaseError } from '../runtime-store.js';

/** The home's configured store (the SQLite file must exist to be read). */
function homeStore(paths: HomePaths, mustExist: boolean): StoreSelection {
  const selection = storeSelection(paths.home, loadConfig(paths.home));
  if (mustExist && selection.kind === 'sqlite' && !existsSync(selection.path)) {
    throw new NoDatabaseError(selection.path);
  }
  return selection;
}

/**
 * `demiurge export [--out FILE]`: every stored event of the home's store as NDJSON, one record per line in
 * position order (`data` and `meta` as the stored JSON text, the chain hash), to stdout or a file.
 */
export async function exportCommand(paths: HomePaths, options: { out?: string }, io: CommandIo): Promise<void> {
  const selection = homeStore(paths, true);
  if (!options.out) {
    for await (const record of storedRecords(selection)) io.out(JSON.stringify(record));
    return;
  }
  const file = createWriteStream(options.out, { flags: 'wx', mode: 0o600 });
  await once(file, 'open').catch((err: NodeJS.ErrnoException) => {
    throw err.code === 'EEXIST' ? new UsageError(`--out ${options.out} exists already; name a new file`) : err;
  });
  let count = 0;
  try {
    for await (const record of storedRecords(selection)) {
      if (!file.write(`${JSON.stringify(record)}\n`)) await once(file, 'drain');
      count++;
    }
  } finally {
    file.end();
    await once(file, 'close');
  }
  io.err(`exported ${count} event(s) from ${describeStore(selection)} to ${options.out}`);
}

const STRING_FIELDS = ['eventId', 'streamType', 'streamId', 'type', 'data', 'meta', 'recordedAt'] as const;
const NUMBER_FIELDS = ['position', 'streamVersion', 'schemaVersion'] as const;

/** One NDJSON line as a record, or a usage error naming the line and the field. */
function parseRecord(line: string, n: number, file: string): StoredEventRecord {
  const fail = (what: string): never => {
    throw new UsageError(`${file}:${n}: ${what}; expected one record of "demiurge export" per line`);
  };
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return fail('not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('not an object');
  const v = value as Record<string, unknown>;
  for (const k of STRING_FIELDS) if (typeof v[k] !== 'string') fail(`${k} must be a string`);
  for (const k of NUMBER_FIELDS) if (!Number.isInteger(v[k])) fail(`${k} must be a whole number`);
  for (const k of ['idempotencyKey', 'hash'] as const) {
    if (v[k] !== null && typeof v[k] !== 'string') fail(`${k} must be a string or null`);
  }
  return {
    position: v.position as number,
    eventId: v.eventId as string,
    streamType: v.streamType as string,
    streamId: v.streamId as string,
    streamVersion: v.streamVersion as number,
    type: v.type as string,
    schemaVersion: v.schemaVersion as number,
    data: v.data as string,
    meta: v.meta as string,
    recordedAt: v.recordedAt as string,
    idempotencyKey: (v.idempotencyKey ?? null) as string | null,
    hash: (v.hash ?? null) as string | null,
  };
}

async function* readRecords(file: string): AsyncGenerator<StoredEventRecord> {
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
  let n = 0;
  for await (const line of lines) {
    n++;
    if (line.trim() === '') continue;
    yield parseRecord(line, n, file);
  }
}

/** Builds the target's projections from its imported log (the store's open catches them up) and says so. */
async function projectionsOf(selection: StoreSelection) {
  return withStore(selection, async (store) => ({
    head: await store.chainHead(),
    projections: await dumpProjections(store),
    names: [...store.projectorNames],
  }));
}

/**
 * `demiurge import FILE`: the records of an export appended into the home's store, which must be empty,
 * keeping positions, ids, versions, times, keys and hashes (the chain head equals the source's), then the
 * projections built from the imported log.
 */
export async function importCommand(
  paths: HomePaths,
  file: string,
  options: { json: boolean },
  io: CommandIo,
): Promise<void> {
  if (!existsSync(file)) throw new UsageError(`no such file: ${file}`);
  const selection = homeStore(paths, false);
  await assertEmptyTarget(selection);
  const started = Date.now();
  const head = await importInto(selection, readRecords(file));
  const built = await projectionsOf(selection);
  const report = {
    target: describeStore(selection),
    events: head.position,
    head: built.head,
    projections: built.names,
    durationMs: Date.now() - started,
  };
  if (options.json) io.out(JSON.stringify(report));
  else {
    io.out(`imported ${head.position} event(s) from ${file} into ${report.target}`);
    io.out(`chain head ${head.position} ${head.hash}`);
    io.out(`projections built from the log: ${built.names.join(', ')}`);
  }
}

/**
 * `demiurge migrate --to postgres://...`: copies the home's SQLite log into an empty PostgreSQL database,
 * builds the projections there, then proves the two equal: the same chain head, the same projections.
 */
export async function migrateCommand(
  paths: HomePaths,
  options: { to: string; json: boolean },
  io: CommandIo,
): Promise<ExitCode> {
  if (!/^postgres(ql)?:\/\//.test(options.to)) {
    throw new UsageError(`--to must be a postgres:// or postgresql:// URL, not "${options.to}"`);
  }
  const source: StoreSelection = { kind: 'sqlite', path: paths.database, synchronous: 'FULL' };
  if (!existsSync(source.path)) throw new NoDatabaseError(source.path);
  const target: StoreSelection = { kind: 'postgres', url: options.to };
  const started = Date.now();
  await assertEmptyTarget(target);
  const from = await projectionsOf(source);
  const head = await importInto(target, storedRecords(source));
  const to = await projectionsOf(target);
  const differing = from.names.filter((name) => !isDeepStrictEqual(from.projections[name], to.projections[name]));
  const chainEqual = from.head.position === to.head.position && from.head.hash === to.head.hash;
  const report = {
    ok: chainEqual && differing.length === 0,
    source: describeStore(source),
    target: describeStore(target),
    events: head.position,
    chain: { source: from.head, target: to.head, equal: chainEqual },
    projections: { checked: from.names, differing },
    durationMs: Date.now() - started,
  };
  if (options.json) io.out(JSON.stringify(report));
  else {
    io.out(`copied ${report.events} event(s) from ${report.source} to ${report.target}`);
    io.out(
      chainEqual
        ? `ok    chain heads equal: ${to.head.position} ${to.head.hash}`
        : `fail  chain heads differ: source ${from.head.position} ${from.head.hash}, target ${to.head.position} ${to.head.hash}`,
    );
    io.out(
      differing.length === 0
        ? `ok    projections equal after the rebuild on PostgreSQL: ${from.names.join(', ')}`
        : `fail  projections differ: ${differing.join(', ')}`,
    );
    if (report.ok) {
      io.out('');
      io.out(
        'to run this home on PostgreSQL, stop its host, then set in config.yaml "store: { kind: postgres, url: <the url> }" (or DEMIURGE_STORE_URL) and start it again',
      );
    }
  }
  return report.ok ? ExitCode.ok : ExitCode.failure;
}
