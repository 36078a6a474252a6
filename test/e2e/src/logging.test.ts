import { cpSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempHome } from './cli.js';
import { type ServeProcess, startServe, writeHostHome } from './serve-process.js';

/**
 * The host logs through one logger port: quiet one-line text on stderr by default, JSON lines with
 * `serve --log-json`. A core whose slot module cannot be imported makes the host log an error at start.
 */
let home: ReturnType<typeof tempHome>;
let serve: ServeProcess | undefined;
beforeEach(() => {
  home = tempHome();
});
afterEach(async () => {
  await serve?.stop('SIGKILL');
  serve = undefined;
  home.remove();
});

/** A copy of the bundled core whose `audit_log` output slot throws when imported. */
function brokenCore(): string {
  const core = join(home.path, 'core');
  cpSync(resolve(import.meta.dirname, '..', '..', '..', 'agent'), core, { recursive: true });
  writeFileSync(join(core, 'output', 'audit_log', 'module.ts'), "throw new Error('audit_log is broken on purpose');\n");
  return core;
}

async function stderrOf(extraArgs: readonly string[]): Promise<string> {
  const ws = writeHostHome(home.path, { extra: [`core: ${brokenCore()}`] });
  serve = await startServe(home.path, ws, extraArgs);
  await serve.stop('SIGTERM');
  return serve.stderr();
}

describe('host logging', () => {
  it('by default: one `demiurge: ...` line for an error, nothing below warn, no JSON', async () => {
    const lines = (await stderrOf([])).split('\n').filter(Boolean);
    expect(lines.some((l) => /^demiurge: importing slot audit_log of core .*broken on purpose/.test(l))).toBe(true);
    expect(lines.some((l) => l.startsWith('{'))).toBe(false);
    expect(lines.some((l) => l.includes('host started'))).toBe(false);
  });

  it('with serve --log-json: JSON lines with level, time and msg, info and up', async () => {
    const records = (await stderrOf(['--log-json']))
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: string; time: string; msg: string; owner?: string });
    const failure = records.find((r) => r.msg.startsWith('importing slot audit_log'));
    expect(failure).toMatchObject({ level: 'error' });
    expect(failure?.msg).toContain('broken on purpose');
    expect(Number.isNaN(Date.parse(failure?.time ?? ''))).toBe(false);
    expect(records.find((r) => r.msg === 'host started')).toMatchObject({ level: 'info', owner: expect.any(String) });
  });
});
