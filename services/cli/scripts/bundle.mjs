#!/usr/bin/env node
// Bundles the compiled CLI (dist/main.js, after tsc) with esbuild into dist/bundle/, all CommonJS: `main-<hash>.cjs`
// holds commander and the command definitions, so `--help` loads one small file; every module it loads with
// `import()` when a command runs (each command's implementation, the error conversion) is in `runtime-<hash>.cjs`,
// one file whose modules initialise on first use, so `status` evaluates what a read needs, not the host; the
// commands in OWN_RUNTIME (status, the host) also get a file of their own. runtime-loader.cjs
// (scripts/runtime-loader.cjs) compiles the main file and the runtime files with V8's code cache. dist/bin.js
// (tsc's, which imports ./main.js) is replaced by a small entry that requires the loader and runs the main file;
// running tsc again restores the unbundled entry. BUNDLE_META=<file> writes esbuild's metafiles (what each file
// holds); BUNDLE_READABLE=1 keeps whitespace (for profiles: esbuild names each module in a comment and each
// lazily initialised module's function after its path). See docs/performance.md#start-up.
import { createHash } from 'node:crypto';
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
    // The slot compiler esbuild (loaded only to compile a changed slot module) stays outside the bundle,
    // imported by a path relative to it: the file the package that uses it resolves.
    b.onResolve({ filter: /^esbuild$/ }, (args) => {
      const file = createRequire(args.importer).resolve(args.path);
      return { path: relative(outdir, file).split('\\').join('/'), external: true };
    });
    // better-sqlite3's JavaScript is bundled (compiled with the runtime's code cache: requiring its dozen files
    // cost a tenth of `status`), and its native addon, which it finds at its first `new Database` by probing
    // paths with the `bindings` package (a stack trace and a dozen file checks), is required by the path
    // `bindings` finds for it here, relative to the bundle. The build stops when that line changed.
    b.onLoad({ filter: /[\\/]better-sqlite3[\\/]lib[\\/]database\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      const line = "require('bindings')('better_sqlite3.node')";
      if (!text.includes(line)) return { errors: [{ text: `better-sqlite3 changed: no ${line} in ${args.path}` }] };
      const root = join(dirname(args.path), '..');
      const addon = createRequire(args.path)('bindings')({
        bindings: 'better_sqlite3.node',
        module_root: root,
        path: true,
      });
      const rel = relative(outdir, addon).split('\\').join('/');
      return { contents: text.replace(line, `require(${JSON.stringify(`demiurge-native:${rel}`)})`), loader: 'js' };
    });
    b.onResolve({ filter: /^demiurge-native:/ }, (args) => ({
      path: args.path.slice('demiurge-native:'.length),
      external: true,
    }));
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

/**
 * commander requires node:child_process at load for the one thing that needs it, running an executable
 * subcommand (this CLI has none): loading it (and with it net, dgram and streams) was a tenth of `--help`. Its
 * `spawn` now requires it on use. The build stops when commander's source no longer has that line.
 */
const lazyChildProcess = {
  name: 'demiurge-lazy-child-process',
  setup(b) {
    b.onLoad({ filter: /[\\/]commander[\\/]lib[\\/]command\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      const line = "const childProcess = require('node:child_process');";
      if (!text.includes(line)) return { errors: [{ text: `commander changed: no "${line}" in ${args.path}` }] };
      const lazy = "const childProcess = { spawn: (...a) => require('node:child_process').spawn(...a) };";
      return { contents: text.replace(line, lazy), loader: 'js' };
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
// main.cjs: commander and the command definitions (what `--help` loads), CommonJS like everything bin.js loads:
// dist/bin.js is an ES module (the package's type), but what it requires runs without Node's ES module loader
// (which reads modules through fs/promises and streams) and without ES module facades of Node's built-ins (each
// reads every export of its module: node:fs's lazy `promises` and streams among them).
const main = await build({
  ...common,
  entryPoints: { main: join(dist, 'main.js') },
  outdir,
  format: 'cjs',
  outExtension: { '.js': '.cjs' },
  plugins: [toRuntime, workspace, lazyChildProcess],
});

// runtime-<hash>.cjs: every module main.cjs loads on use, and what they import, in one CommonJS file whose
// modules initialise on their first import() (esbuild wraps each lazily loaded module). One file, so that
// runtime-loader.cjs can compile it with V8's code cache (Node 20 has none for ES modules); CommonJS run in
// strict mode, as the ES modules it is made of.
//
// A command in OWN_RUNTIME also gets a file of its own, `runtime-<name>-<hash>.cjs`: that command's module, the
// error conversion and what they import, nothing else. Reading, deserialising and running the top level of a
// file costs in proportion to its size and its module count, whatever the command then evaluates: `status`
// spent about a quarter of its instructions on the 3.6 MB shared file's (see docs/performance.md#start-up).
// Each process loads one command's module (and the error conversion), so class identities never cross files.
const OWN_RUNTIME = ['commands/status.js', 'commands/host.js'];
const errorsKey = 'cli-errors.js';

/**
 * Node built-ins that a command may never use but whose modules are required when a module importing them
 * initialises: `node:crypto` (ids, hashes: about 19 M instructions to load, a twentieth of `status`) and
 * `node:timers/promises` (about 9 M). In the runtime files each `require()` of them returns a stand-in that
 * requires the module on first use of any of its properties (get, has, keys: a namespace copy loads it).
 */
const LAZY_BUILTIN_PATTERN = /\brequire\("((?:node:)?(?:crypto|timers\/promises))"\)/g;
const LAZY_BUILTIN_HELPER = [
  'function __demiurgeLazyBuiltin(id) {',
  '  let loaded;',
  '  const load = () => (loaded ??= require(id));',
  '  return new Proxy({}, {',
  '    get: (_, key) => load()[key],',
  '    has: (_, key) => key in load(),',
  '    ownKeys: () => Reflect.ownKeys(load()),',
  '    getOwnPropertyDescriptor: (_, key) => {',
  '      const found = Reflect.getOwnPropertyDescriptor(load(), key);',
  '      return found && { ...found, configurable: true };',
  '    },',
  '    getPrototypeOf: () => Reflect.getPrototypeOf(load()),',
  '  });',
  '}',
].join('\n');

/** Builds one runtime file holding `keys` (and what they import); returns its file name. */
async function buildRuntime(keys, entryNames) {
  const entry = keys
    .map((key) => `  ${JSON.stringify(key)}: () => import(${JSON.stringify(runtimeModules.get(key))}),`)
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
    entryNames,
    outExtension: { '.js': '.cjs' },
    format: 'cjs',
    banner: { js: `'use strict';\n${LAZY_BUILTIN_HELPER}` },
    define: { 'import.meta.dirname': '__dirname' },
    plugins: [workspace],
  });
  metafiles.push(runtime.metafile);
  const runtimeFile = Object.keys(runtime.metafile.outputs)
    .find((file) => file.endsWith('.cjs'))
    ?.replace(/^.*[\\/]/, '');
  if (!runtimeFile) throw new Error('bundle: esbuild wrote no runtime file');
  // The runtime's own `import()` calls (slot modules, esbuild, a dependency's fallback such as pkce-challenge's
  // `import("node:crypto")`) go through the loader (`__demiurgeImport`, see runtime-loader.cjs), which imports any
  // specifier. `import(` inside a backquoted comment of a readable build is left alone; the build stops when the
  // count of rewritten calls differs from the count found, to be looked at.
  const runtimePath = join(outdir, runtimeFile);
  const runtimeText = readFileSync(runtimePath, 'utf8');
  const callPattern = /(?<![\w$.`'"])import\((?=[\w"'`(])/g;
  const imports = runtimeText.match(callPattern)?.length ?? 0;
  const rewritten = runtimeText
    .replace(callPattern, '__demiurgeImport(')
    .replace(LAZY_BUILTIN_PATTERN, (_, id) => `__demiurgeLazyBuiltin(${JSON.stringify(id)})`);
  const left = rewritten.match(callPattern)?.length ?? 0;
  if (left > 0) throw new Error(`bundle: ${left} of ${imports} import( in ${runtimeFile} were not rewritten`);
  writeFileSync(runtimePath, rewritten);
  return runtimeFile;
}

const metafiles = [main.metafile];
const runtimeFile = await buildRuntime([...runtimeModules.keys()], 'runtime-[hash]');
/** key → the runtime file main.js loads it from. */
const runtimeOf = new Map([...runtimeModules.keys()].map((key) => [key, runtimeFile]));
for (const key of OWN_RUNTIME) {
  if (!runtimeModules.has(key)) throw new Error(`bundle: OWN_RUNTIME names ${key}, which main.js never imports`);
  const name = key.replace(/^.*\//, '').replace(/\.js$/, '');
  runtimeOf.set(key, await buildRuntime([key, errorsKey], `runtime-${name}-[hash]`));
}
copyFileSync(join(root, 'scripts', 'runtime-loader.cjs'), join(outdir, 'runtime-loader.cjs'));
const mainFile = join(outdir, 'main.cjs');
let replaced = 0;
const mainText = readFileSync(mainFile, 'utf8').replace(/\bimport\("demiurge-runtime:([^"]+)"\)/g, (_, key) => {
  replaced++;
  return `__demiurgeRuntime(${JSON.stringify(runtimeOf.get(key))}, ${JSON.stringify(key)})`;
});
if (replaced === 0 || mainText.includes('demiurge-runtime:')) {
  throw new Error(
    `bundle: ${replaced} runtime imports replaced in main.js, some left: rebuild with BUNDLE_READABLE=1 to see`,
  );
}
// main-<hash>.cjs: the loader runs it with a code cache of its own too, so its name carries a hash of its final
// text (V8 checks only a source's length against a cache: the name keeps a cache from meeting other code).
const mainFinal = `'use strict';\nconst { loadRuntime: __demiurgeRuntime } = require('./runtime-loader.cjs');\n${mainText}`;
const mainName = `main-${createHash('sha256').update(mainFinal).digest('hex').slice(0, 8).toUpperCase()}.cjs`;
writeFileSync(join(outdir, mainName), mainFinal);
rmSync(mainFile);
writeFileSync(
  join(dist, 'bin.js'),
  [
    '#!/usr/bin/env node',
    '// The bundled CLI (scripts/bundle.mjs); `tsc -p tsconfig.build.json` writes the unbundled entry back.',
    "import nodeModule from 'node:module';",
    '',
    "// Node 22.1 and later keep V8's compiled code of the bundle on disk between runs; Node 20 has no such cache.",
    'nodeModule.enableCompileCache?.();',
    '// CommonJS from here on (see scripts/bundle.mjs): no ES module loader, no facades of built-ins; the main',
    "// file is compiled with V8's code cache like the runtime (bundle/runtime-loader.cjs).",
    `nodeModule.createRequire(import.meta.url)('./bundle/runtime-loader.cjs').runMain(${JSON.stringify(mainName)});`,
    '',
  ].join('\n'),
);
if (process.env.BUNDLE_META) {
  const outputs = Object.assign({}, ...metafiles.map((m) => m.outputs));
  const inputs = Object.assign({}, ...metafiles.map((m) => m.inputs));
  writeFileSync(process.env.BUNDLE_META, JSON.stringify({ inputs, outputs }));
}
