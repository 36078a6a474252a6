import { randomUUID } from 'node:crypto';
import { extname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DemiurgeError, ErrorCode } from '@demiurge/contracts';
import { type NamespacedUnregister, register } from 'tsx/esm/api';
import type { SlotSpec } from './agent-core.js';
import type { SlotFunction } from './slot-sdk.js';

/** A slot module that exports neither a default function nor a named `run` function. */
export class SlotModuleError extends DemiurgeError {
  override readonly name = 'SlotModuleError';
  readonly code = ErrorCode.InvalidSpec;
  constructor(
    readonly entrypoint: string,
    readonly detail: string,
  ) {
    super(`slot module ${entrypoint}: ${detail}`);
  }
}

/** Imports slot modules for one runtime (one core): `load` once per module file, cached. */
export interface SlotModuleLoader {
  load(spec: SlotSpec): Promise<SlotFunction>;
}

/**
 * A loader for slot modules: TypeScript (`.ts`, `.mts`) through one tsx namespace per loader (registered on
 * first use, so a new loader, e.g. for a reloaded core, imports fresh copies), JavaScript (`.js`, `.mjs`) with
 * `import()`. A TypeScript file outside an ESM package is compiled as CommonJS; its `exports` object is
 * unwrapped, so `export default` works either way. A module that failed to import is tried again next time.
 */
export function createSlotModuleLoader(): SlotModuleLoader {
  const cache = new Map<string, Promise<SlotFunction>>();
  let tsx: NamespacedUnregister | undefined;
  const importModule = (path: string): Promise<unknown> => {
    const ext = extname(path);
    if (ext !== '.ts' && ext !== '.mts') return import(pathToFileURL(path).href);
    tsx ??= register({ namespace: `demiurge-slots-${randomUUID()}`, tsconfig: false });
    return tsx.import(pathToFileURL(path).href, import.meta.url);
  };
  return {
    load(spec) {
      let loading = cache.get(spec.entrypoint);
      if (!loading) {
        loading = importModule(spec.entrypoint).then((namespace) => {
          const fn = slotFunctionOf(namespace) ?? slotFunctionOf((namespace as { default?: unknown } | null)?.default);
          if (!fn) {
            throw new SlotModuleError(
              spec.entrypoint,
              'it exports no slot function (export default async (ctx) => {...})',
            );
          }
          return fn;
        });
        cache.set(spec.entrypoint, loading);
        loading.catch(() => cache.delete(spec.entrypoint));
      }
      return loading;
    },
  };
}

function slotFunctionOf(namespace: unknown): SlotFunction | undefined {
  if (namespace === null || typeof namespace !== 'object') return undefined;
  const { default: main, run } = namespace as { default?: unknown; run?: unknown };
  if (typeof main === 'function') return main as SlotFunction;
  if (typeof run === 'function') return run as SlotFunction;
  return undefined;
}
