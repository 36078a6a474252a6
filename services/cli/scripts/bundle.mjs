#!/usr/bin/env node
// Bundles the compiled CLI (dist/main.js, after tsc) with esbuild into dist/bundle/: `main.js` (an ES module)
// holds commander and the command definitions, so `--help` loads one small file; every module it loads with
// `import()` when a command runs (each command's implementation, the error conversion) is in `runtime-<hash>.cjs`,
// one CommonJS file whose modules initialise on first use, so `status` evaluates what a read needs, not the
// host. runtime-loader.js (scripts/runtime-loader.mjs) compiles that file with V8's code cache. dist/bin.js
// (tsc's, which imports ./main.js) is replaced by a small entry that imports the bundle; running tsc again
// restores the unbundled entry. BUNDLE_META=<file> writes esbuild's metafile (what each file holds);
// BUNDLE_READABLE=1 keeps whitespace (for profiles: esbuild names each module in a comment and each lazily
// initialised module's function after its path). See docs/performance.md#start-up.
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { build } from 'esbuild';

const root = join(import.meta.dirname, '..');
const dist = join(root, 'dist');
const outdir = join(dist, 'bundle');
const require = createRequire(join(root, 'package.json'));

/** Workspace code (any package's dist/): side-effect free, and its `import.meta.dirname` kept. */
const isWorkspaceFile = (path) =>
  /[\\/](packages|services)[\\/].*[\\/]dist[\\/]/.test(path) && !path.includes('node_modules');

/**
 * Where each name a workspace package's entry exports is defined: the entry (`dist/index.js`) is a list of
 * `export { a, b as c } from './file.js'` (and `export * from` such lists), so `c` → (file, `b`). A name
 * the lists do not give (declared in a file reached by `export *`) is absent: its import is left as it is.
 */
const barrels = new Map();
function barrelOf(entry) {
  let names = barrels.get(entry);
  if (names) return names;
  names = new Map();
  barrels.set(entry, names);
  const text = readFileSync(entry, 'utf8');
  for (const [, list, from] of text.matchAll(/^export \{([^}]*)\} from '([^']+)';$/gm)) {
    const file = from.startsWith('.') ? join(dirname(entry), from) : packageEntry(from, entry);
    if (!file) continue;
    for (const spec of list
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const [local, exported = local] = spec.split(/\s+as\s+/);
      const target = from.startsWith('.') ? { file, name: local } : barrelOf(file).get(local);
      if (target && !names.has(exported)) names.set(exported, target);
    }
  }
  for (const [, from] of text.matchAll(/^export \* from '(\.[^']+)';$/gm)) {
    for (const [name, target] of barrelOf(join(dirname(entry), from))) if (!names.has(name)) names.set(name, target);
  }
  return names;
}

/** The entry file of a workspace package (`@demiurge/x` → its dist/index.js), resolved from `importer`. */
function packageEntry(specifier, importer) {
  if (!specifier.startsWith('@demiurge/')) return undefined;
  try {
    const file = createRequire(importer).resolve(specifier);
    return isWorkspaceFile(file) ? file : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `import { a, b } from '@demiurge/x'` → imports of the files that define `a` and `b`. esbuild splits a bundle
 * by the files each entry reaches, and a package entry reaches every file of the package: without this, the
 * chunk `status` loads holds the whole host (engine, workers, gateway) because it imports one function from
 * `@demiurge/host`. An import with a name the entry's lists do not give is left as it is.
 */
function withDirectImports(text, importer) {
  return text.replace(/^(import|export) \{([^}]*)\} from '(@demiurge\/[^']+)';$/gm, (statement, kind, list, from) => {
    const entry = packageEntry(from, importer);
    if (!entry) return statement;
    const names = barrelOf(entry);
    const specs = list
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const targets = specs.map((spec) => {
      const [imported, local = imported] = spec.split(/\s+as\s+/);
      const target = names.get(imported);
      return (
        target &&
        `${kind} { ${target.name === local ? local : `${target.name} as ${local}`} } from ${JSON.stringify(target.file)};`
      );
    });
    return targets.every(Boolean) ? targets.join('\n') : statement;
  });
}

const workspace = {
  name: 'demiurge-workspace',
  setup(b) {
    // rxjs's `node` export is CommonJS (not tree-shaken); its ES2015 build is the same code as modules.
    const rxjs = join(dirname(require.resolve('rxjs/package.json')), 'dist', 'esm', 'index.js');
    b.onResolve({ filter: /^rxjs$/ }, () => ({ path: rxjs, sideEffects: false }));
    // yaml's `node` export is CommonJS too; its ES module build (`browser/`) is the same code, except that it
    // warns with console.warn instead of process.emitWarning and ignores the LOG_TOKENS/LOG_STREAM debug vars.
    b.onResolve({ filter: /^yaml$/ }, (args) => ({
      path: join(dirname(createRequire(args.importer).resolve('yaml/package.json')), 'browser', 'dist', 'index.js'),
    }));
    // Native better-sqlite3 and the slot compiler esbuild (loaded only to compile a changed slot module) stay
    // outside the bundle, imported by a path relative to it: the files the packages that use them resolve.
    b.onResolve({ filter: /^(better-sqlite3|esbuild)$/ }, (args) => {
      const file = createRequire(args.importer).resolve(args.path);
      return { path: relative(outdir, file).split('\\').join('/'), external: true };
    });
    // zod's `z.locales` namespace re-exports ~60 translations (a fifth of the bundle) that no code here uses;
    // zod itself configures English from locales/en.js directly. Only `en` stays in that namespace.
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({
      contents: "export { default as en } from './en.js';\n",
      loader: 'js',
    }));
    // Every module of the workspace is free of import-time side effects (none has any; the e2e suites run the
    // bundled CLI): esbuild may drop a module none of whose exports a command uses.
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === 'resolving' || args.kind === 'entry-point') return undefined;
      if (!isWorkspaceFile(args.importer) && !args.path.startsWith('@demiurge/')) return undefined;
      const found = await b.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: 'resolving',
      });
      if (found.errors.length > 0) return { errors: found.errors };
      if (found.external || !isWorkspaceFile(found.path)) return found;
      return { path: found.path, sideEffects: false };
    });
    // The bundle lives in dist/bundle/: a module that finds files beside itself (the default core, the
    // gateway shim) gets the directory it was compiled to, relative to the bundle.
    b.onLoad({ filter: /\.js$/ }, (args) => {
      if (!isWorkspaceFile(args.path)) return undefined;
      const text = withDirectImports(readFileSync(args.path, 'utf8'), args.path);
      if (!text.includes('import.meta.dirname'))
        return { contents: text, loader: 'js', resolveDir: dirname(args.path) };
      const rel = relative(outdir, dirname(args.path)).split('\\').join('/');
      return {
        contents: text.replaceAll('import.meta.dirname', `(import.meta.dirname + ${JSON.stringify(`/${rel}`)})`),
        loader: 'js',
        resolveDir: dirname(args.path),
      };
    });
  },
};

/**
 * The main build's dynamic imports of workspace code (each command's implementation, the error conversion)
 * become calls of the runtime loader: `import("demiurge-runtime:<key>")` in the output, replaced below.
 */
const runtimeModules = new Map();
const toRuntime = {
  name: 'demiurge-runtime',
  setup(b) {
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.kind !== 'dynamic-import' || args.pluginData === 'resolving') return undefined;
      const found = await b.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: 'resolving',
      });
      if (found.errors.length > 0) return { errors: found.errors };
      if (!isWorkspaceFile(found.path)) return found;
      const key = relative(dist, found.path).split('\\').join('/');
      runtimeModules.set(key, found.path);
      return { path: `demiurge-runtime:${key}`, external: true };
    });
  },
};

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  // Whitespace and syntax only: names stay readable in stack traces (DEMIURGE_DEBUG) and error logs.
  minifyWhitespace: !process.env.BUNDLE_READABLE,
  minifySyntax: true,
  sourcemap: 'linked',
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
};

rmSync(outdir, { recursive: true, force: true });
// main.js: commander and the command definitions, an ES module Node loads itself (what `--help` loads).
const main = await build({
  ...common,
  entryPoints: { main: join(dist, 'main.js') },
  outdir,
  format: 'esm',
  // CommonJS libraries in an ES module bundle call require() for Node built-ins.
  banner: {
    js: "import { createRequire as __demiurgeRequire } from 'node:module'; const require = __demiurgeRequire(import.meta.url);",
  },
  plugins: [toRuntime, workspace],
});

// runtime-<hash>.cjs: every module main.js loads on use, and what they import, in one CommonJS file whose
// modules initialise on their first import() (esbuild wraps each lazily loaded module). One file, so that
// runtime-loader.js can compile it with V8's code cache (Node 20 has none for ES modules); CommonJS run in
// strict mode, as the ES modules it is made of.
const entry = [...runtimeModules]
  .map(([key, file]) => `  ${JSON.stringify(key)}: () => import(${JSON.stringify(file)}),`)
  .join('\n');
const runtime = await build({
  ...common,
  stdin: {
    contents: `export const modules = {\n${entry}\n};\n`,
    resolveDir: dist,
    sourcefile: 'runtime-entry.js',
    loader: 'js',
  },
  outdir,
  entryNames: 'runtime-[hash]',
  outExtension: { '.js': '.cjs' },
  format: 'cjs',
  banner: { js: "'use strict';" },
  define: { 'import.meta.dirname': '__dirname' },
  plugins: [workspace],
});
const runtimeFile = Object.keys(runtime.metafile.outputs)
  .find((file) => file.endsWith('.cjs'))
  ?.replace(/^.*[\\/]/, '');
if (!runtimeFile) throw new Error('bundle: esbuild wrote no runtime file');
// The runtime's own `import()` calls (slot modules, esbuild, a dependency's fallback such as pkce-challenge's
// `import("node:crypto")`) go through the loader (`__demiurgeImport`, see runtime-loader.mjs), which imports any
// specifier. `import(` inside a backquoted comment of a readable build is left alone; the build stops when the
// count of rewritten calls differs from the count found, to be looked at.
const runtimePath = join(outdir, runtimeFile);
const runtimeText = readFileSync(runtimePath, 'utf8');
const callPattern = /(?<![\w$.`'"])import\((?=[\w"'`(])/g;
const imports = runtimeText.match(callPattern)?.length ?? 0;
const rewritten = runtimeText.replace(callPattern, '__demiurgeImport(');
const left = rewritten.match(callPattern)?.length ?? 0;
if (left > 0) throw new Error(`bundle: ${left} of ${imports} import( in ${runtimeFile} were not rewritten`);
writeFileSync(runtimePath, rewritten);
copyFileSync(join(root, 'scripts', 'runtime-loader.mjs'), join(outdir, 'runtime-loader.js'));
const mainFile = join(outdir, 'main.js');
let replaced = 0;
const mainText = readFileSync(mainFile, 'utf8').replace(/\bimport\("demiurge-runtime:([^"]+)"\)/g, (_, key) => {
  replaced++;
  return `__demiurgeRuntime(${JSON.stringify(runtimeFile)}, ${JSON.stringify(key)})`;
});
if (replaced === 0 || mainText.includes('demiurge-runtime:')) {
  throw new Error(
    `bundle: ${replaced} runtime imports replaced in main.js, some left: rebuild with BUNDLE_READABLE=1 to see`,
  );
}
writeFileSync(mainFile, `import { loadRuntime as __demiurgeRuntime } from './runtime-loader.js';\n${mainText}`);
writeFileSync(
  join(dist, 'bin.js'),
  [
    '#!/usr/bin/env node',
    '// The bundled CLI (scripts/bundle.mjs); `tsc -p tsconfig.build.json` writes the unbundled entry back.',
    "import nodeModule from 'node:module';",
    '',
    "// Node 22.1 and later keep V8's compiled code of the bundle on disk between runs; Node 20 has no such cache.",
    'nodeModule.enableCompileCache?.();',
    "await import('./bundle/main.js');",
    '',
  ].join('\n'),
);
if (process.env.BUNDLE_META) {
  const outputs = { ...main.metafile.outputs, ...runtime.metafile.outputs };
  const inputs = { ...main.metafile.inputs, ...runtime.metafile.inputs };
  writeFileSync(process.env.BUNDLE_META, JSON.stringify({ inputs, outputs }));
}
