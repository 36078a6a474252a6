import { dirname, join, resolve } from 'node:path';

/** The bundled default Agent Core: `agent/` at the repository root. */
export const DEFAULT_CORE_DIR = resolve(import.meta.dirname, '..', '..', '..', 'agent');

/** A host process's path to its store file. */
export const storePath = (home: string) => join(home, 'runtime', 'runtime.sqlite3');

/** The directory the store of a home lives in. */
export const runtimeDir = (home: string) => dirname(storePath(home));
