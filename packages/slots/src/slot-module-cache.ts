import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type CompiledInput, compileSlotModule, moduleKey, SLOT_COMPILER_ID, sha256 } from './slot-compiler.js';

/** Where a compiled TypeScript slot module came from. */
export type SlotModuleSource = 'cache' | 'compiled';

/** A TypeScript slot module ready to import. */
export interface CachedModule {
  /** A `file:` URL of the compiled module (with a cache directory), else a `data:` URL. */
  readonly url: string;
  readonly source: SlotModuleSource;
  /** The compiled file (with a cache directory). */
  readonly file?: string;
}

/** What the cache keeps per entrypoint: the files the module was built from, and the module's key. */
interface Manifest {
  readonly compiler: string;
  readonly entrypoint: string;
  readonly inputs: readonly CompiledInput[];
  readonly packages: readonly string[];
  readonly key: string;
}

/**
 * Compiled TypeScript slot modules under `dir` (the host uses `<home>/cache/slots`), keyed by content:
 * `<key>.mjs` where the key is the SHA-256 of the compiler id and of the path and SHA-256 of every file the
 * module was built from (the entrypoint and its relative imports), and `<entry>.json` per entrypoint listing
 * those files. A later start reads the listed files, hashes them and imports `<key>.mjs` without compiling
 * when nothing changed; an edited entrypoint or imported file, a new compiler, a package file that is gone
 * or a missing module recompiles it (and removes the module it replaces). Files are written to a temporary
 * name and renamed, so concurrent hosts never read half a module. Without `dir`, every load compiles and the
 * module is imported from a `data:` URL (nothing is written).
 */
export class SlotModuleCache {
  constructor(private readonly dir?: string) {}

  async module(entrypoint: string): Promise<CachedModule> {
    if (!this.dir) {
      const { code } = await compileSlotModule(entrypoint);
      return { url: `data:text/javascript;base64,${Buffer.from(code).toString('base64')}`, source: 'compiled' };
    }
    const manifestFile = join(this.dir, `${sha256(`${SLOT_COMPILER_ID}\0${entrypoint}`)}.json`);
    // The check reads a few small files synchronously: at start-up nothing else waits, and under load every
    // asynchronous read would wait its turn behind the busy event loop.
    const manifest = readManifest(manifestFile, entrypoint);
    if (manifest && isCurrent(manifest)) {
      const file = join(this.dir, `${manifest.key}.mjs`);
      if (existsSync(file)) return { url: pathToUrl(file), source: 'cache', file };
    }
    const compiled = await compileSlotModule(entrypoint);
    const key = moduleKey(compiled.inputs);
    const file = join(this.dir, `${key}.mjs`);
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeAtomic(file, compiled.code);
    const next: Manifest = {
      compiler: SLOT_COMPILER_ID,
      entrypoint,
      inputs: compiled.inputs,
      packages: compiled.packages,
      key,
    };
    await writeAtomic(manifestFile, `${JSON.stringify(next, null, 2)}\n`);
    if (manifest && manifest.key !== key) await rm(join(this.dir, `${manifest.key}.mjs`), { force: true });
    return { url: pathToUrl(file), source: 'compiled', file };
  }
}

const pathToUrl = (file: string) => pathToFileURL(file).href;

function readManifest(file: string, entrypoint: string): Manifest | undefined {
  try {
    const manifest = JSON.parse(readFileSync(file, 'utf8')) as Manifest;
    return manifest.compiler === SLOT_COMPILER_ID && manifest.entrypoint === entrypoint ? manifest : undefined;
  } catch {
    return undefined; // absent or unreadable: compile again
  }
}

/** Every input still has the content compiled, every package file is still there, and the key agrees. */
function isCurrent(manifest: Manifest): boolean {
  if (!Array.isArray(manifest.inputs) || manifest.inputs.length === 0) return false;
  for (const input of manifest.inputs) {
    let text: string;
    try {
      text = readFileSync(input.path, 'utf8');
    } catch {
      return false;
    }
    if (sha256(text) !== input.sha256) return false;
  }
  if (!(manifest.packages ?? []).every((file) => existsSync(file))) return false;
  return moduleKey(manifest.inputs) === manifest.key;
}

async function writeAtomic(file: string, text: string): Promise<void> {
  const temp = `${file}.${randomUUID()}.tmp`;
  await writeFile(temp, text, { mode: 0o600 });
  await rename(temp, file);
}
