import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** Where a Demiurge home keeps things. */
export interface HomePaths {
  readonly home: string;
  readonly runtimeDir: string;
  readonly database: string;
}

/** `--home`, else `$DEMIURGE_HOME`, else `~/.demiurge`. */
export function resolveHome(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): HomePaths {
  const home = resolve(flag ?? env.DEMIURGE_HOME ?? join(homedir(), '.demiurge'));
  const runtimeDir = join(home, 'runtime');
  return { home, runtimeDir, database: join(runtimeDir, 'runtime.sqlite3') };
}
