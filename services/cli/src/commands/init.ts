import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { SCHEMA_VERSION } from '@demiurge/event-store-sqlite';
import { configPath, describeStore, isPostgresStore, loadConfig } from '@demiurge/host';
import { CONFIG_TEMPLATE } from '../config-template.js';
import type { HomePaths } from '../home.js';
import type { CommandIo } from '../io.js';
import { openRuntimeStore, runtimeProjectorNames } from '../runtime-store.js';

/** One thing `init` looked at: what it is, where, and whether it created it or found it. */
export interface InitStep {
  readonly what: 'home' | 'runtime dir' | 'config' | 'database';
  readonly path: string;
  readonly action: 'created' | 'kept';
}

function ensureDir(path: string, what: InitStep['what']): InitStep {
  if (existsSync(path)) return { what, path, action: 'kept' };
  mkdirSync(path, { recursive: true, mode: 0o700 });
  chmodSync(path, 0o700);
  return { what, path, action: 'created' };
}

/**
 * `demiurge init`: the home and runtime dir (0700), `config.yaml` from the template unless one exists (an
 * existing one must load: a bad key is a usage error), then the store with every projection. Repeatable.
 */
export async function initCommand(paths: HomePaths, options: { json: boolean }, io: CommandIo): Promise<void> {
  const steps: InitStep[] = [ensureDir(paths.home, 'home'), ensureDir(paths.runtimeDir, 'runtime dir')];
  const file = configPath(paths.home);
  if (existsSync(file)) steps.push({ what: 'config', path: file, action: 'kept' });
  else {
    writeFileSync(file, CONFIG_TEMPLATE, { mode: 0o600, flag: 'wx' });
    steps.push({ what: 'config', path: file, action: 'created' });
  }
  const config = loadConfig(paths.home);
  const existed = existsSync(paths.database);
  const store = await openRuntimeStore(paths, { mustExist: false, synchronous: config.store.synchronous });
  const head = await store.head();
  await store.close();
  const postgres = isPostgresStore(store);
  // A PostgreSQL database is made by its administrator: "created" there means its log was empty.
  steps.push({
    what: 'database',
    path: describeStore(store),
    action: (postgres ? head > 0 : existed) ? 'kept' : 'created',
  });
  if (options.json) {
    io.out(
      JSON.stringify({
        home: paths.home,
        steps,
        provider: config.provider.name,
        schemaVersion: SCHEMA_VERSION,
        projections: runtimeProjectorNames,
        head,
      }),
    );
    return;
  }
  for (const s of steps) {
    const extra =
      s.what === 'home' || s.what === 'runtime dir'
        ? ' (0700)'
        : s.what === 'config'
          ? ` (provider ${config.provider.name})`
          : ` (${postgres ? 'PostgreSQL' : `schema v${SCHEMA_VERSION}`}, ${runtimeProjectorNames.length} projections, ${head} events)`;
    io.out(`${s.action.padEnd(8)} ${s.what.padEnd(11)} ${s.path}${s.action === 'created' ? extra : ''}`);
  }
  io.out('');
  io.out('next: "demiurge doctor" checks the setup, "demiurge status" shows the runtime.');
}
