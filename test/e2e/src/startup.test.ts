import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliBin, demiurge, tempHome } from './cli.js';
import { writeHostHome } from './serve-process.js';

/**
 * Start-up: what a command loads, and TypeScript slot modules compiled once. A module loader hook
 * (`node --import`) records every module URL a real CLI process loads, so these checks need no timing.
 */
const hookDir = mkdtempSync(join(tmpdir(), 'demiurge-load-hook-'));
writeFileSync(
  join(hookDir, 'hooks.mjs'),
  [
    "import { appendFileSync } from 'node:fs';",
    'export async function load(url, context, next) {',
    "  if (process.env.LOADED_LOG) appendFileSync(process.env.LOADED_LOG, url + '\\n');",
    '  return next(url, context);',
    '}',
    '',
  ].join('\n'),
);
// The CLI's runtime is one CommonJS file (scripts/bundle.mjs), and what it requires (better-sqlite3) is loaded
// by require(), which the ES module hook does not see: Module._load records those.
writeFileSync(
  join(hookDir, 'register.mjs'),
  [
    "import { appendFileSync } from 'node:fs';",
    "import Module, { register } from 'node:module';",
    "import { pathToFileURL } from 'node:url';",
    "register(new URL('./hooks.mjs', import.meta.url));",
    'const load = Module._load;',
    'Module._load = function (request, parent, isMain) {',
    '  const exports = load.apply(this, arguments);',
    '  if (process.env.LOADED_LOG && !Module.isBuiltin(request)) {',
    "    appendFileSync(process.env.LOADED_LOG, pathToFileURL(Module._resolveFilename(request, parent, isMain)).href + '\\n');",
    '  }',
    '  return exports;',
    '};',
    // Node's own modules the process loaded (`NativeModule internal/deps/undici/undici`), at exit.
    "process.once('exit', () => {",
    '  if (!process.env.LOADED_LOG) return;',
    "  appendFileSync(process.env.LOADED_LOG, process.moduleLoadList.map((m) => 'builtin:' + m + '\\n').join(''));",
    '});',
    '',
  ].join('\n'),
);
afterAll(() => rmSync(hookDir, { recursive: true, force: true }));

let logs = 0;
/** NODE_OPTIONS and LOADED_LOG for a child whose loaded modules are recorded; `loaded()` reads them. */
function recording() {
  const log = join(hookDir, `loaded-${++logs}.txt`);
  return {
    env: { NODE_OPTIONS: `--import=${join(hookDir, 'register.mjs')}`, LOADED_LOG: log },
    loaded: () =>
      (existsSync(log) ? readFileSync(log, 'utf8') : '').split('\n').filter((url) => url.startsWith('file:')),
    builtins: () =>
      (existsSync(log) ? readFileSync(log, 'utf8') : '')
        .split('\n')
        .filter((line) => line.startsWith('builtin:'))
        .map((line) => line.slice('builtin:'.length)),
  };
}

describe('what a command loads', () => {
  it('--help loads the CLI entry and its command definitions only: no store, no runtime, no library', async () => {
    const r = recording();
    const help = await demiurge(['--help'], r.env);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Usage: demiurge/);
    const loaded = r.loaded();
    expect(loaded.length).toBeGreaterThan(0);
    expect(loaded.filter((url) => /node_modules|better-sqlite3|\/packages\//.test(url))).toEqual([]);
    // The entry, the bundle's main file (commander and the command definitions) and a few small shared chunks.
    const bytes = loaded.reduce((sum, url) => sum + statSync(new URL(url)).size, 0);
    expect(bytes).toBeLessThan(150_000);
  });

  it('status loads the store but neither the slot compiler nor the PostgreSQL driver', async () => {
    const home = tempHome();
    try {
      expect((await demiurge(['init', '--home', home.path])).code).toBe(0);
      const r = recording();
      const status = await demiurge(['status', '--home', home.path], r.env);
      expect(status.code).toBe(0);
      const loaded = r.loaded();
      expect(loaded.some((url) => url.includes('better-sqlite3'))).toBe(true);
      expect(loaded.filter((url) => /esbuild|tsx/.test(url))).toEqual([]);
      // The PostgreSQL driver is loaded only for a PostgreSQL store: at import, `pg` asks for `navigator`,
      // which loads Node's whole fetch implementation (undici), about 30 ms of every start on SQLite.
      const builtins = r.builtins();
      expect(builtins.length).toBeGreaterThan(0);
      expect(builtins.filter((m) => /undici/.test(m))).toEqual([]);
    } finally {
      home.remove();
    }
  });

  it('status loads its own runtime file and the native addon only: no JavaScript from node_modules, no crypto, no child_process', async () => {
    const home = tempHome();
    try {
      expect((await demiurge(['init', '--home', home.path])).code).toBe(0);
      const r = recording();
      const status = await demiurge(['status', '--home', home.path], { ...r.env, DEMIURGE_CODE_CACHE_REPORT: '1' });
      expect(status.code).toBe(0);
      const loaded = r.loaded();
      // better-sqlite3's JavaScript is in the bundle (with the runtime's code cache); its addon is required by
      // the path found at build time. The runtime file is status's own, not the one holding every command.
      expect(loaded.filter((url) => url.includes('/node_modules/') && !url.endsWith('.node'))).toEqual([]);
      expect(loaded.some((url) => url.endsWith('better_sqlite3.node'))).toBe(true);
      // (The loader compiles runtime files itself, so its report names the one it compiled.)
      expect(status.stderr).toMatch(/^code cache \w+: .*[\\/]runtime-status-\w+\.cjs\.commands_status\.js\./m);
      // node:crypto (ids, hashes) and node:child_process (commander's executable subcommands) are required on use.
      const builtins = r.builtins();
      expect(builtins.filter((m) => /^NativeModule (crypto|child_process)$/.test(m))).toEqual([]);
    } finally {
      home.remove();
    }
  });
});

/** `demiurge serve --log-json` until ready, then SIGTERM: its JSON log records and the modules it loaded. */
async function serveOnce(home: string, core: string) {
  const r = recording();
  const child = spawn(process.execPath, [cliBin, 'serve', '--json', '--log-json', '--home', home, '--core', core], {
    env: { ...process.env, ...r.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (stdout.includes('\n')) resolve();
    });
    void exited.then(() => reject(new Error(`serve exited before it was ready: ${stderr}`)));
  });
  child.kill('SIGTERM');
  await exited;
  const records = stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg: string; slotId?: string; source?: string; file?: string });
  const slots = Object.fromEntries(
    records.filter((l) => l.msg.startsWith('slot module ')).map((l) => [l.slotId, l.source]),
  );
  return { slots, loaded: r.loaded(), records };
}

const snapshot = (dir: string) => Object.fromEntries(readdirSync(dir).map((f) => [f, statSync(join(dir, f)).mtimeMs]));

describe('TypeScript slot modules are compiled once per content', () => {
  it('the first start compiles into <home>/cache/slots; the next start imports them without compiling; an edit recompiles that module', async () => {
    const home = tempHome();
    try {
      writeHostHome(home.path);
      const core = join(home.path, 'core');
      cpSync(join(import.meta.dirname, '..', '..', '..', 'agent'), core, { recursive: true });
      const cache = join(home.path, 'cache', 'slots');

      const first = await serveOnce(home.path, core);
      expect(first.slots).toEqual({ base_input: 'compiled', base_output: 'compiled', audit_log: 'compiled' });
      expect(first.loaded.some((url) => url.includes('/esbuild/'))).toBe(true);
      const compiled = snapshot(cache);
      expect(Object.keys(compiled).filter((f) => f.endsWith('.mjs'))).toHaveLength(3);

      const second = await serveOnce(home.path, core);
      expect(second.slots).toEqual({ base_input: 'cache', base_output: 'cache', audit_log: 'cache' });
      expect(second.loaded.filter((url) => /\/esbuild\/|\/tsx\//.test(url))).toEqual([]);
      expect(snapshot(cache)).toEqual(compiled);

      const module = join(core, 'input', 'base_input', 'module.ts');
      writeFileSync(module, `${readFileSync(module, 'utf8')}\n// edited\n`);
      const third = await serveOnce(home.path, core);
      expect(third.slots).toEqual({ base_input: 'compiled', base_output: 'cache', audit_log: 'cache' });
      const after = snapshot(cache);
      expect(Object.keys(after).filter((f) => f.endsWith('.mjs'))).toHaveLength(3);
      expect(Object.keys(after).filter((f) => f.endsWith('.mjs') && !(f in compiled))).toHaveLength(1);
    } finally {
      home.remove();
    }
  });
});
