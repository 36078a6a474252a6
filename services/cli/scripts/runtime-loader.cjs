// Copied by scripts/bundle.mjs into dist/bundle/runtime-loader.cjs: loads the CLI's runtime bundle (every
// command's implementation, one CommonJS file) with a V8 code cache, so that a command does not parse and
// compile the runtime's JavaScript again at every start. Node 20 keeps no compiled code of ES modules between
// runs (Node 22.1's module.enableCompileCache does, for ES modules too); `vm.Script` takes V8's cached data.
//
// The cache holds compiled code, never results: V8 checks its own version and flags and rejects data made for
// other code, and each cache file is named by the runtime's content hash (in its file name), the command that
// made it, the Node version and the process's Node options. A missing or rejected cache is written once, when
// the process exits (or 2 s after the runtime loaded, for a host that keeps serving), from what that run
// compiled. DEMIURGE_CODE_CACHE: unset → `code-cache/` beside this file; `off` → no cache; else a directory.
// DEMIURGE_CODE_CACHE_REPORT=1 prints `code cache used|none|rejected|off` on stderr. See
// docs/performance.md#the-runtime-file-and-v8s-code-cache.
// CommonJS, like main.cjs that requires it: importing a built-in from an ES module builds its ES module facade,
// which reads every export (node:fs's lazy `promises` and streams among them).
'use strict';
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const nodeModule = require('node:module');
const { dirname, join } = require('node:path');
const vm = require('node:vm');

const WRITE_AFTER_MS = 2000;
/**
 * CommonJS's function wrapper plus `__demiurgeImport`: the bundle calls it where its code says `import()` (slot
 * modules, esbuild), because on Node 20 a script compiled from cached data loses its dynamic import callback
 * (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING). Relative specifiers resolve from this file, beside the runtime.
 */
const WRAPPER = ['(function (exports, require, module, __filename, __dirname, __demiurgeImport) {', '\n})'];
const importer = (specifier) => import(specifier);

/** The runtime files this process evaluated, in order: file name → exports. */
const runtimes = new Map();

/**
 * The namespace of the runtime's module `key` (`commands/status.js`): from a runtime file this process already
 * evaluated that holds it (a command's own file holds the error conversion too, so the classes a command throws
 * are the ones it is converted with), else from `runtimeFile` (beside this file), compiled and evaluated on the
 * first call; each module initialises on its first load.
 */
function loadRuntime(runtimeFile, key) {
  let runtime = [...runtimes.values()].find((r) => Object.hasOwn(r.modules, key));
  if (!runtime) {
    runtime = runtimes.get(runtimeFile) ?? evaluate(join(__dirname, runtimeFile), key);
    runtimes.set(runtimeFile, runtime);
  }
  const load = runtime.modules[key];
  if (!load) throw new Error(`the CLI bundle has no module ${key}; rebuild the CLI (pnpm run build)`);
  return load();
}

/**
 * Runs the CLI's main file (`main-<hash>.cjs` beside this file: commander and the command definitions), compiled
 * with a code cache of its own (`key` main), shared by every command.
 */
function runMain(mainFile) {
  evaluate(join(__dirname, mainFile), 'main');
}

function evaluate(file, key) {
  const source = readFileSync(file, 'utf8');
  const cacheFile = cachePath(file, key);
  let cachedData;
  if (cacheFile) {
    try {
      cachedData = readFileSync(cacheFile);
    } catch {
      // No cache yet: this run writes it.
    }
  }
  const script = new vm.Script(`${WRAPPER[0]}${source}${WRAPPER[1]}`, {
    filename: file,
    ...(cachedData ? { cachedData } : {}),
  });
  if (process.env.DEMIURGE_CODE_CACHE_REPORT) {
    const state = !cacheFile ? 'off' : !cachedData ? 'none' : script.cachedDataRejected ? 'rejected' : 'used';
    // The main file's line says so first; a runtime file's starts with `code cache` (what tests read).
    const what = key === 'main' ? 'main file code cache' : 'code cache';
    process.stderr.write(`${what} ${state}${cacheFile ? `: ${cacheFile}` : ''}\n`);
  }
  const module = { exports: {}, id: file, filename: file, loaded: false };
  script.runInThisContext()(module.exports, nodeModule.createRequire(file), module, file, dirname(file), importer);
  module.loaded = true;
  if (cacheFile && (!cachedData || script.cachedDataRejected)) writeLater(script, cacheFile);
  return module.exports;
}

/** `<dir>/<runtime file>.<key>.<node version>-<arch>-<options hash>.v8`, or undefined when the cache is off. */
function cachePath(file, key) {
  const setting = process.env.DEMIURGE_CODE_CACHE;
  if (setting === 'off' || setting === '0') return undefined;
  const dir = setting || join(dirname(file), 'code-cache');
  const options = fnv1a(JSON.stringify([process.execArgv, process.env.NODE_OPTIONS ?? '']));
  const name = `${file.replace(/^.*[\\/]/, '')}.${key.replace(/[^\w.-]+/g, '_')}.${process.version}-${process.arch}-${options}.v8`;
  return join(dir, name);
}

/** Writes what this run compiled once: at a successful exit, or after a while for a process that keeps running. */
function writeLater(script, cacheFile) {
  let written = false;
  const write = () => {
    if (written) return;
    written = true;
    try {
      mkdirSync(dirname(cacheFile), { recursive: true, mode: 0o700 });
      const temporary = `${cacheFile}.${process.pid}.tmp`;
      writeFileSync(temporary, script.createCachedData());
      renameSync(temporary, cacheFile);
    } catch {
      // A cache that cannot be written (a read-only install) only means the next start compiles again.
    }
  };
  // A run that failed may have stopped early (no home yet, a usage error): what it compiled would be a poor
  // cache for every later run, so only a run that exits 0 writes it; the next one that does writes it then.
  process.once('exit', (code) => {
    if (code === 0) write();
  });
  setTimeout(write, WRITE_AFTER_MS).unref();
}

/** A short hash of a string (FNV-1a, 32 bits, hex): names a cache per set of Node options without node:crypto. */
function fnv1a(text) {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash.toString(16).padStart(8, '0');
}

module.exports = { loadRuntime, runMain };
