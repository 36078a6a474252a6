import { existsSync, lstatSync } from 'node:fs';
import { resolve } from 'node:path';
import { DamagedStoreError, DatabaseNewerThanCodeError } from '@demiurge/event-store';
import { checkStoreFile, readSchemaInfo, SCHEMA_VERSION, type SqliteEventStore } from '@demiurge/event-store-sqlite';
import {
  ConfigError,
  CoreLoadError,
  configPath,
  DEFAULT_CORE_DIR,
  describeStore,
  type HostConfig,
  type HostStore,
  isPostgresStore,
  loadConfig,
  loadCore,
  openHostStore,
} from '@demiurge/host';
import { ExitCode } from '../cli-errors.js';
import { coreProblem } from '../core-dir.js';
import type { HomePaths } from '../home.js';
import type { CommandIo } from '../io.js';
import { openRuntimeStore, runtimeProjectors } from '../runtime-store.js';

export type CheckStatus = 'ok' | 'warn' | 'fail';

/** One line of `demiurge doctor`. */
export interface DoctorCheck {
  readonly check: string;
  readonly status: CheckStatus;
  readonly detail: string;
}

const mode = (m: number) => `0${(m & 0o777).toString(8)}`;

function checkDir(path: string, what: string, strict: boolean): DoctorCheck {
  if (!existsSync(path)) {
    return { check: what, status: 'fail', detail: `${path} does not exist; run "demiurge init"` };
  }
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) {
    return {
      check: what,
      status: strict ? 'fail' : 'warn',
      detail: `${path} is a symlink; it must be a real directory`,
    };
  }
  if (!stat.isDirectory()) return { check: what, status: 'fail', detail: `${path} is not a directory` };
  if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) {
    return { check: what, status: 'fail', detail: `${path} belongs to uid ${stat.uid}, not to this user` };
  }
  if ((stat.mode & 0o077) !== 0) {
    return {
      check: what,
      status: strict ? 'fail' : 'warn',
      detail: `${path} is ${mode(stat.mode)}: other users can reach it; chmod 700 ${path}`,
    };
  }
  return { check: what, status: 'ok', detail: `${path} (${mode(stat.mode)})` };
}

function checkConfig(paths: HomePaths): { check: DoctorCheck; config: HostConfig | undefined; error?: ConfigError } {
  const file = configPath(paths.home);
  try {
    const config = loadConfig(paths.home);
    const where = existsSync(file) ? file : 'no config.yaml: defaults';
    const model = config.provider.model ? `, model ${config.provider.model}` : '';
    return {
      check: { check: 'config', status: 'ok', detail: `${where} (provider ${config.provider.name}${model})` },
      config,
    };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { check: { check: 'config', status: 'fail', detail: err.message }, config: undefined, error: err };
  }
}

/** The Agent Core: it must load (agent.yaml, pipelines.yaml, every listed slot.yaml) as the host loads it. */
async function checkCore(config: HostConfig | undefined): Promise<{ check: DoctorCheck; error?: CoreLoadError }> {
  const configured = config?.core;
  const dir = resolve(configured ?? DEFAULT_CORE_DIR);
  const problem = coreProblem(dir);
  if (problem) {
    return configured
      ? { check: { check: 'core', status: 'fail', detail: `${problem} (config "core")` } }
      : {
          check: { check: 'core', status: 'warn', detail: `${problem} (the bundled core; set "core" in config.yaml)` },
        };
  }
  try {
    await loadCore(dir);
  } catch (err) {
    if (!(err instanceof CoreLoadError)) throw err;
    return { check: { check: 'core', status: 'fail', detail: `does not load: ${err.message}` }, error: err };
  }
  return { check: { check: 'core', status: 'ok', detail: `${dir}${configured ? '' : ' (bundled)'}` } };
}

function checkSettings(store: SqliteEventStore): DoctorCheck[] {
  const s = store.settings();
  return [
    s.journalMode === 'wal'
      ? { check: 'journal mode', status: 'ok', detail: 'wal' }
      : { check: 'journal mode', status: 'fail', detail: `${s.journalMode}; the store needs WAL` },
    s.synchronous >= 2
      ? { check: 'synchronous', status: 'ok', detail: 'FULL (every commit is fsynced)' }
      : { check: 'synchronous', status: 'warn', detail: 'NORMAL: the last commits can be lost on power loss' },
    s.busyTimeoutMs > 0
      ? { check: 'busy timeout', status: 'ok', detail: `${s.busyTimeoutMs} ms` }
      : { check: 'busy timeout', status: 'warn', detail: '0 ms: a second process fails at once on a lock' },
    s.foreignKeys
      ? { check: 'foreign keys', status: 'ok', detail: 'on' }
      : { check: 'foreign keys', status: 'warn', detail: 'off' },
  ];
}

/** PostgreSQL: the server answers, the schema opens (migrated or refused as newer), the hash chain holds. */
async function checkPostgres(url: string): Promise<DoctorCheck[]> {
  const where = describeStore({ kind: 'postgres', url });
  let store: HostStore;
  try {
    store = await openHostStore({ kind: 'postgres', url }, { projectors: runtimeProjectors });
  } catch (err) {
    return [{ check: 'database', status: 'fail', detail: (err as Error).message }];
  }
  try {
    const checks: DoctorCheck[] = [
      { check: 'database', status: 'ok', detail: `${where} (PostgreSQL, ${await store.head()} events)` },
    ];
    const chain = await store.verifyChain();
    checks.push(
      chain.ok
        ? { check: 'hash chain', status: 'ok', detail: `${chain.eventsChecked} event(s) chained` }
        : { check: 'hash chain', status: 'fail', detail: `breaks at position ${chain.firstBreak?.position}` },
    );
    checks.push({ check: 'projections', status: 'ok', detail: `${runtimeProjectors.length} at the head` });
    return checks;
  } finally {
    await store.close();
  }
}

async function checkDatabase(paths: HomePaths, config: HostConfig | undefined): Promise<DoctorCheck[]> {
  if (config?.store.kind === 'postgres' && config.store.url) return checkPostgres(config.store.url);
  if (!existsSync(paths.database)) {
    return [
      { check: 'database', status: 'fail', detail: `no runtime database at ${paths.database}; run "demiurge init"` },
    ];
  }
  const checks: DoctorCheck[] = [];
  try {
    // Every page, WAL included, read-only: nothing below opens a damaged file for writing.
    const file = checkStoreFile(paths.database, { integrity: 'full' });
    if (file) {
      checks.push({
        check: 'integrity',
        status: 'ok',
        detail: `${file.pages} page(s) of ${file.pageSize} bytes${file.walFrames > 0 ? ` (${file.walFrames} WAL frame(s) not yet checkpointed)` : ''} pass quick_check (${file.durationMs} ms)`,
      });
    }
  } catch (err) {
    if (err instanceof DamagedStoreError) {
      return [
        {
          check: 'integrity',
          status: 'fail',
          detail: `${err.message}; every command refuses it: move it aside and restore a backup`,
        },
      ];
    }
    if (!(err instanceof DatabaseNewerThanCodeError)) {
      return [{ check: 'database', status: 'fail', detail: (err as Error).message }];
    }
  }
  let info: ReturnType<typeof readSchemaInfo>;
  try {
    info = readSchemaInfo(paths.database);
  } catch (err) {
    return [{ check: 'database', status: 'fail', detail: (err as Error).message }];
  }
  if (info.version > SCHEMA_VERSION) {
    return [
      {
        check: 'schema version',
        status: 'fail',
        detail: `${info.version}, newer than this code (${SCHEMA_VERSION}); upgrade demiurge`,
      },
    ];
  }
  checks.push(
    info.version === SCHEMA_VERSION
      ? { check: 'schema version', status: 'ok', detail: `${info.version}` }
      : { check: 'schema version', status: 'warn', detail: `${info.version}; migrated to ${SCHEMA_VERSION} on open` },
  );
  let store: HostStore;
  try {
    store = await openRuntimeStore(paths, {
      mustExist: true,
      ...(config ? { synchronous: config.store.synchronous } : {}),
    });
  } catch (err) {
    return [...checks, { check: 'database', status: 'fail', detail: (err as Error).message }];
  }
  try {
    checks.push({ check: 'database', status: 'ok', detail: `${paths.database} (${await store.head()} events)` });
    if (!isPostgresStore(store)) checks.push(...checkSettings(store));
    const stale = info.checkpoints.filter((c) =>
      runtimeProjectors.some((p) => p.name === c.name && p.version !== c.version),
    );
    checks.push({
      check: 'projections',
      status: 'ok',
      detail: `${runtimeProjectors.length} at the head${stale.length > 0 ? `; rebuilt on open: ${stale.map((c) => c.name).join(', ')}` : ''}`,
    });
  } finally {
    await store.close();
  }
  return checks;
}

/**
 * `demiurge doctor`: one ok/warn/fail line per check. Exit 2 when the config is unusable, else 1 on any
 * failure. Never creates the home or the store.
 */
export async function doctorCommand(paths: HomePaths, options: { json: boolean }, io: CommandIo): Promise<ExitCode> {
  const checks: DoctorCheck[] = [checkDir(paths.home, 'home', false)];
  const config = existsSync(paths.home) ? checkConfig(paths) : undefined;
  if (config) checks.push(config.check);
  if (existsSync(paths.home)) {
    checks.push(checkDir(paths.runtimeDir, 'runtime dir', true));
    checks.push(...(await checkDatabase(paths, config?.config)));
  }
  const core = await checkCore(config?.config);
  checks.push(core.check);
  const failed = checks.filter((c) => c.status === 'fail').length;
  const warned = checks.filter((c) => c.status === 'warn').length;
  if (options.json) io.out(JSON.stringify({ ok: failed === 0, home: paths.home, checks }));
  else {
    const width = Math.max(...checks.map((c) => c.check.length));
    for (const c of checks) io.out(`${c.status.padEnd(4)}  ${c.check.padEnd(width)}  ${c.detail}`);
    io.out(
      failed === 0
        ? `doctor: ok${warned > 0 ? ` (${warned} warning(s))` : ''}`
        : `doctor: ${failed} failure(s), ${warned} warning(s)`,
    );
  }
  if (config?.error || core.error) return ExitCode.usage;
  return failed > 0 ? ExitCode.failure : ExitCode.ok;
}
