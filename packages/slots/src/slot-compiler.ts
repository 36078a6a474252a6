import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { dirname, extname, isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Loader, Plugin } from 'esbuild';

/**
 * Names the compiler and its settings: part of every cache key, so a new esbuild or new settings never
 * reuse what an older one wrote.
 */
export const SLOT_COMPILER_ID = 'demiurge-slots/esbuild-0.28.2/esm-node20/v1';

/** One file a compiled module was built from, with the SHA-256 of the exact text compiled. */
export interface CompiledInput {
  readonly path: string;
  readonly sha256: string;
}

/** A TypeScript slot module compiled to one ES module. */
export interface CompiledModule {
  /** The JavaScript: the entrypoint and its relative imports bundled; packages and Node built-ins imported. */
  readonly code: string;
  /** Every local file in the bundle (the entrypoint first), as compiled. */
  readonly inputs: readonly CompiledInput[];
  /** Absolute paths of the package files the module imports (they must still exist to reuse the code). */
  readonly packages: readonly string[];
}

const LOADERS: Record<string, Loader> = {
  '.ts': 'ts',
  '.mts': 'ts',
  '.cts': 'ts',
  '.tsx': 'tsx',
  '.js': 'js',
  '.mjs': 'js',
  '.cjs': 'js',
  '.jsx': 'jsx',
  '.json': 'json',
};

const BUILTINS = new Set(builtinModules);
const isBuiltin = (specifier: string) =>
  specifier.startsWith('node:') || BUILTINS.has(specifier) || BUILTINS.has(specifier.split('/')[0]!);
const isBare = (specifier: string) =>
  !specifier.startsWith('.') && !isAbsolute(specifier) && !specifier.startsWith('file:');

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * The cache key of a module built from `inputs`: the compiler, then each input's path and content hash.
 * Any edit to the entrypoint or to a file it imports relatively changes it.
 */
export function moduleKey(inputs: readonly CompiledInput[]): string {
  const hash = createHash('sha256').update(SLOT_COMPILER_ID).update('\0');
  for (const input of inputs) hash.update(input.path).update('\0').update(input.sha256).update('\0');
  return hash.digest('hex');
}

/**
 * Compiles a TypeScript slot module with esbuild into one ES module: the entrypoint and the local files it
 * imports (relative paths) are bundled; Node built-ins stay imports; a package (`import x from 'pkg'`) stays
 * an import of the file it resolves to from the slot's folder, written as an absolute `file:` URL so the
 * code runs from anywhere. `import.meta.url`, `import.meta.dirname` and `import.meta.filename` keep naming
 * each source file, and `require` resolves from the entrypoint's folder. Type-only imports are dropped.
 */
export async function compileSlotModule(entrypoint: string): Promise<CompiledModule> {
  const { build } = await import('esbuild');
  const inputs: CompiledInput[] = [];
  const packages = new Set<string>();
  const plugin: Plugin = {
    name: 'demiurge-slot-module',
    setup(b) {
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind === 'entry-point' || args.pluginData === 'resolving' || !isBare(args.path)) return undefined;
        if (isBuiltin(args.path)) return { path: args.path, external: true };
        const found = await b.resolve(args.path, {
          kind: args.kind,
          resolveDir: args.resolveDir,
          importer: args.importer,
          pluginData: 'resolving',
        });
        if (found.errors.length > 0 || found.external)
          return found.errors.length > 0 ? { errors: found.errors } : found;
        packages.add(found.path);
        return { path: pathToFileURL(found.path).href, external: true };
      });
      b.onLoad({ filter: /.*/, namespace: 'file' }, async (args) => {
        const text = await readFile(args.path, 'utf8');
        inputs.push({ path: args.path, sha256: sha256(text) });
        const loader = LOADERS[extname(args.path)] ?? 'default';
        return { contents: loader === 'json' ? text : withImportMeta(text, args.path), loader };
      });
    },
  };
  const result = await build({
    entryPoints: [entrypoint],
    absWorkingDir: dirname(entrypoint),
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    conditions: [], // Node's conditions only (platform node adds `node`, `import`/`require`), not `module`
    mainFields: ['main'],
    tsconfigRaw: {},
    outdir: dirname(entrypoint), // nothing is written (write: false); the source map's paths are relative to it
    sourcemap: 'external',
    sourcesContent: false,
    logLevel: 'silent',
    banner: {
      js: `import { createRequire as __demiurgeCreateRequire } from 'node:module';\nconst require = __demiurgeCreateRequire(${JSON.stringify(pathToFileURL(entrypoint).href)});`,
    },
    plugins: [plugin],
  });
  const code = result.outputFiles.find((f) => f.path.endsWith('.js'))?.text ?? '';
  const map = result.outputFiles.find((f) => f.path.endsWith('.js.map'))?.text;
  // The entrypoint first, then the other files in path order: the key does not depend on load order.
  const [entry, ...rest] = [
    ...inputs.filter((i) => i.path === entrypoint),
    ...inputs.filter((i) => i.path !== entrypoint).sort((a, b) => (a.path < b.path ? -1 : 1)),
  ];
  return {
    code: map ? withSourceMap(code, map, dirname(entrypoint)) : code,
    inputs: entry ? [entry, ...rest] : rest,
    packages: [...packages].sort(),
  };
}

/** The code with its source map inline, naming the sources by absolute `file:` URLs (the code is moved). */
function withSourceMap(code: string, mapText: string, dir: string): string {
  const map = JSON.parse(mapText) as { sources: string[] };
  map.sources = map.sources.map((source) => pathToFileURL(resolve(dir, source)).href);
  const body = code.replace(/\n\/\/# sourceMappingURL=.*\n?$/, '\n');
  return `${body}//# sourceMappingURL=data:application/json;base64,${Buffer.from(JSON.stringify(map)).toString('base64')}\n`;
}

/**
 * The text of a source file with its own paths fixed to the file (the bundle lives elsewhere):
 * `import.meta.url`, `.dirname` and `.filename`, and CommonJS `__filename` and `__dirname` where the file uses
 * them without declaring them.
 */
function withImportMeta(text: string, path: string): string {
  const file = resolve(path);
  let out = text;
  if (out.includes('import.meta')) {
    out = out
      .replace(/\bimport\.meta\.url\b/g, JSON.stringify(pathToFileURL(file).href))
      .replace(/\bimport\.meta\.dirname\b/g, JSON.stringify(dirname(file)))
      .replace(/\bimport\.meta\.filename\b/g, JSON.stringify(file));
  }
  const declared = (name: string) => new RegExp(`\\b(const|let|var|function|class)\\s+${name}\\b`).test(out);
  const header = [
    /\b__filename\b/.test(out) && !declared('__filename') ? `const __filename = ${JSON.stringify(file)};` : '',
    /\b__dirname\b/.test(out) && !declared('__dirname') ? `const __dirname = ${JSON.stringify(dirname(file))};` : '',
  ].join('');
  // One line, so the file's own line numbers (errors, the source map) stay as they are.
  return header ? `${header}${out}` : out;
}
