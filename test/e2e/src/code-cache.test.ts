import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { demiurge, tempHome } from './cli.js';

/**
 * The CLI's runtime (every command's implementation, one file) is compiled with V8's code cache: the first run
 * of a command writes what it compiled, the next runs of that command skip parsing and compiling it. The cache
 * is compiled code keyed by content, never a result: a damaged or foreign cache is rejected and rewritten, and
 * the command answers the same with or without it. DEMIURGE_CODE_CACHE_REPORT=1 makes the loader say which.
 */
const cacheDir = mkdtempSync(join(tmpdir(), 'demiurge-code-cache-'));
afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

const env = (dir: string) => ({ DEMIURGE_CODE_CACHE: dir, DEMIURGE_CODE_CACHE_REPORT: '1' });
const report = (stderr: string) => /^code cache (\w+)/m.exec(stderr)?.[1];
const statusOf = (home: string, dir: string) => demiurge(['status', '--home', home, '--json'], env(dir));
/** The status document without what changes between two runs (whether the store's check ran, and when). */
const stable = (stdout: string) =>
  JSON.stringify(JSON.parse(stdout), (key, value) => (key === 'storeCheck' ? undefined : value));

describe('the code cache of the CLI runtime', () => {
  it('the first run writes it, the next runs use it, a damaged one is rejected and rewritten; the answer never changes', async () => {
    const home = tempHome();
    try {
      expect((await demiurge(['init', '--home', home.path], env(cacheDir))).code).toBe(0);
      const dir = mkdtempSync(join(cacheDir, 'status-'));

      const first = await statusOf(home.path, dir);
      expect(first.code).toBe(0);
      expect(report(first.stderr)).toBe('none');
      // The runtime file's cache (the main file, commander and the definitions, has one of its own).
      const files = readdirSync(dir).filter((f) => f.endsWith('.v8') && f.startsWith('runtime'));
      expect(files).toHaveLength(1);
      expect(files[0]).toMatch(/commands_status\.js/);
      const file = join(dir, files[0]!);
      const written = readFileSync(file);
      expect(written.length).toBeGreaterThan(10_000);

      const second = await statusOf(home.path, dir);
      expect(second.code).toBe(0);
      expect(report(second.stderr)).toBe('used');
      expect(stable(second.stdout)).toBe(stable(first.stdout));
      expect(readFileSync(file).equals(written)).toBe(true);

      // Same size, other bytes: V8 refuses it; the command still answers, and the cache is written again.
      writeFileSync(file, Buffer.alloc(written.length, 7));
      const damaged = await statusOf(home.path, dir);
      expect(damaged.code).toBe(0);
      expect(report(damaged.stderr)).toBe('rejected');
      expect(stable(damaged.stdout)).toBe(stable(first.stdout));
      expect(readFileSync(file).equals(Buffer.alloc(written.length, 7))).toBe(false);
      expect(report((await statusOf(home.path, dir)).stderr)).toBe('used');

      const off = await demiurge(['status', '--home', home.path, '--json'], env('off'));
      expect(off.code).toBe(0);
      expect(report(off.stderr)).toBe('off');
      expect(stable(off.stdout)).toBe(stable(first.stdout));
    } finally {
      home.remove();
    }
  });

  it('a run that fails writes no cache (it may have stopped early); the next run that succeeds writes it', async () => {
    const home = tempHome();
    try {
      const dir = mkdtempSync(join(cacheDir, 'failed-'));
      const failed = await statusOf(home.path, dir);
      expect(failed.code).toBe(1);
      expect(failed.stderr).toMatch(/no runtime database/);
      expect(readdirSync(dir).filter((f) => f.endsWith('.v8'))).toEqual([]);
      expect((await demiurge(['init', '--home', home.path], env(dir))).code).toBe(0);
      expect(report((await statusOf(home.path, dir)).stderr)).toBe('none');
      expect(report((await statusOf(home.path, dir)).stderr)).toBe('used');
    } finally {
      home.remove();
    }
  });

  it('each command keeps its own cache, and other Node options another one', async () => {
    const home = tempHome();
    try {
      const dir = mkdtempSync(join(cacheDir, 'commands-'));
      expect((await demiurge(['init', '--home', home.path], env(dir))).code).toBe(0);
      expect((await statusOf(home.path, dir)).code).toBe(0);
      const sessions = await demiurge(['sessions', 'list', '--home', home.path], env(dir));
      expect(sessions.code).toBe(0);
      expect(report(sessions.stderr)).toBe('none');
      const flagged = await demiurge(['status', '--home', home.path], {
        ...env(dir),
        NODE_OPTIONS: '--max-old-space-size=512',
      });
      expect(flagged.code).toBe(0);
      expect(report(flagged.stderr)).toBe('none');
      const names = readdirSync(dir).filter((f) => f.endsWith('.v8'));
      expect(names.filter((f) => f.includes('commands_status.js'))).toHaveLength(2);
      expect(names.filter((f) => f.includes('commands_sessions.js'))).toHaveLength(1);
      expect(names.filter((f) => f.includes('commands_init.js'))).toHaveLength(1);
    } finally {
      home.remove();
    }
  });
});
