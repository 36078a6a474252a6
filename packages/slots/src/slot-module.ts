import { randomUUID } from 'node:crypto';
import { extname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DemiurgeError, ErrorCode } from '@demiurge/contracts';
import type { SlotSpec } from './agent-core.js';
import { type CachedModule, SlotModuleCache, type SlotModuleSource } from './slot-module-cache.js';
import type { SlotFunction } from './slot-sdk.js';

/** A slot module that does not compile, or exports neither a default function nor a named `run` function. */
export class SlotModuleError extends DemiurgeError {
  override readonly name = 'SlotModuleError';
  readonly code = ErrorCode.InvalidSpec;
  constructor(
    readonly entrypoint: string,
    readonly detail: string,
    options?: ErrorOptions,
  ) {
    super(`slot module ${entrypoint}: ${detail}`, options);
  }
}

/** Imports slot modules for one runtime (one core): `load` once per module file, cached. */
export interface SlotModuleLoader {
  load(spec: SlotSpec): Promise<SlotFunction>;
}

/** How one slot module was imported: told to {@link SlotModuleLoaderOptions.onLoad}. */
export interface SlotModuleLoad {
  readonly slotId: string;
  readonly entrypoint: string;
  /**
   * `cache`: a TypeScript module compiled by an earlier start, imported without compiling; `compiled`: a
   * TypeScript module compiled now; `javascript`: a `.js`/`.mjs` module, imported as it is.
   */
  readonly source: SlotModuleSource | 'javascript';
  /** The compiled file imported (TypeScript modules with a cache directory). */
  readonly file?: string;
  /** Milliseconds from asking for the module to having its slot function (compiling included). */
  readonly ms: number;
}

export interface SlotModuleLoaderOptions {
  /**
   * Where compiled TypeScript modules are kept between starts (the host passes `<home>/cache/slots`), see
   * {@link SlotModuleCache}. Absent, each loader compiles its TypeScript modules again and writes nothing.
   */
  readonly cacheDir?: string;
  /** Told once per module imported (not for a failed import). */
  readonly onLoad?: (load: SlotModuleLoad) => void;
}

/**
 * A loader for slot modules: TypeScript (`.ts`, `.mts`) compiled by esbuild once per content (see
 * {@link SlotModuleCache}), JavaScript (`.js`, `.mjs`) with `import()`. Each loader imports its own copies
 * (a new loader, e.g. for a reloaded core, re-runs the modules' top level), and `export default` or a named
 * `run` export is the slot function. A module that failed to import is tried again next time.
 */
export function createSlotModuleLoader(options: SlotModuleLoaderOptions = {}): SlotModuleLoader {
  const cache = new Map<string, Promise<SlotFunction>>();
  const compiled = new SlotModuleCache(options.cacheDir);
  // A query of this loader's own on file: URLs: Node keeps one instance per URL, so each loader gets fresh ones.
  const instance = randomUUID();
  const importModule = async (spec: SlotSpec): Promise<{ namespace: unknown; load: Omit<SlotModuleLoad, 'ms'> }> => {
    const path = spec.entrypoint;
    const ext = extname(path);
    const base = { slotId: spec.id, entrypoint: path };
    if (ext !== '.ts' && ext !== '.mts') {
      const namespace = await import(`${pathToFileURL(path).href}?slots=${instance}`);
      return { namespace, load: { ...base, source: 'javascript' } };
    }
    let module: CachedModule;
    try {
      module = await compiled.module(path);
    } catch (err) {
      throw new SlotModuleError(path, `it does not compile: ${compileMessage(err)}`, { cause: err });
    }
    const url = module.url.startsWith('file:') ? `${module.url}?slots=${instance}` : module.url;
    const namespace = await import(url);
    return { namespace, load: { ...base, source: module.source, ...(module.file ? { file: module.file } : {}) } };
  };
  return {
    load(spec) {
      let loading = cache.get(spec.entrypoint);
      if (!loading) {
        const started = performance.now();
        loading = importModule(spec).then(({ namespace, load }) => {
          const fn = slotFunctionOf(namespace) ?? slotFunctionOf((namespace as { default?: unknown } | null)?.default);
          if (!fn) {
            throw new SlotModuleError(
              spec.entrypoint,
              'it exports no slot function (export default async (ctx) => {...})',
            );
          }
          options.onLoad?.({ ...load, ms: performance.now() - started });
          return fn;
        });
        cache.set(spec.entrypoint, loading);
        loading.catch(() => cache.delete(spec.entrypoint));
      }
      return loading;
    },
  };
}

/** esbuild's first error with its file and line, else the error's message. */
function compileMessage(err: unknown): string {
  const first = (err as { errors?: { text: string; location?: { file: string; line: number } | null }[] }).errors?.[0];
  if (first) return first.location ? `${first.location.file}:${first.location.line}: ${first.text}` : first.text;
  return err instanceof Error ? err.message : String(err);
}

function slotFunctionOf(namespace: unknown): SlotFunction | undefined {
  if (namespace === null || typeof namespace !== 'object') return undefined;
  const { default: main, run } = namespace as { default?: unknown; run?: unknown };
  if (typeof main === 'function') return main as SlotFunction;
  if (typeof run === 'function') return run as SlotFunction;
  return undefined;
}
