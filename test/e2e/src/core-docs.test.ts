import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliBin, tempHome } from './cli.js';
import { assistantTexts, bundledCore, turnPins } from './core-home.js';

const doc = readFileSync(join(bundledCore, '..', 'docs', 'core-revisions.md'), 'utf8');

/** The shell block between the worked-example markers of docs/core-revisions.md. */
function workedExample(): string {
  const block = /<!-- worked-example:start -->\s*```sh\n([\s\S]*?)```\s*<!-- worked-example:end -->/.exec(doc)?.[1];
  if (!block) throw new Error('docs/core-revisions.md has no worked-example block');
  return block;
}

function sh(script: string, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-e', '-c', `demiurge() { "${process.execPath}" "${cliBin}" "$@"; }\n${script}`], {
      cwd,
      env: { ...process.env, BUNDLED_CORE: bundledCore, DEMIURGE_HOME: join(cwd, 'home') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

let dir: ReturnType<typeof tempHome> | undefined;
afterEach(() => {
  dir?.remove();
  dir = undefined;
});

describe('docs/core-revisions.md', () => {
  it('its worked example runs as written and does what the page says', async () => {
    dir = tempHome();
    const run = await sh(workedExample(), dir.path);
    expect(run.stderr).not.toContain('unexpected');
    expect(run.code, run.stderr).toBe(0);
    const out = run.stdout.split('\n');
    expect(out).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^saved revision #1 [0-9a-f]{12} \(\+11 ~0 -0: /),
        'working   clean (the working copy is the current revision)',
        'working   modified: +2 ~1 -0: output/shout/module.mjs, output/shout/slot.yaml, pipelines.yaml',
        expect.stringMatching(/check passed: 4 slot modules imported/),
        expect.stringMatching(/^saved revision #2 [0-9a-f]{12} \(\+2 ~1 -0: /),
        expect.stringMatching(/^rolled back: revision #3 [0-9a-f]{12} is current/),
      ]),
    );
    const home = join(dir.path, 'home');
    expect(await assistantTexts(home)).toEqual(['[FAKE] HELLO', '[fake] hello again']);
    const [first, second] = await turnPins(home);
    expect(first?.slots.map((s) => s.id)).toContain('shout');
    expect(second?.slots.map((s) => s.id)).not.toContain('shout');
    expect(second?.revision).not.toBe(first?.revision);
  }, 120_000);
});
