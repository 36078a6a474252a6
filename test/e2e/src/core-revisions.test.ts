import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assistantTexts, coreHome, turnPins } from './core-home.js';

interface CoreStatusJson {
  coreId: string;
  revision: string | null;
  number: number | null;
  clean: boolean;
  changes: { added: string[]; changed: string[]; removed: string[] };
}
interface Revision {
  revision: string;
  parent: string | null;
  number: number;
  reason: string;
  message: string;
  restoredFrom?: string;
  taskId?: string;
}
interface VersionsJson {
  coreId: string;
  current: string | null;
  revisions: Revision[];
}

let h: ReturnType<typeof coreHome> | undefined;
afterEach(() => {
  h?.remove();
  h = undefined;
});

describe('demiurge core: revisions of the configured Agent Core (real CLI)', () => {
  it('status, check, save, diff, discard, rollback and versions; a core that fails its check is not saved', async () => {
    h = coreHome();
    const { cli, json, core } = h;
    expect((await cli('init')).code).toBe(0);
    const before = await json<CoreStatusJson>('core', 'status');
    expect(before).toMatchObject({ coreId: 'default', revision: null, number: null, clean: false });
    expect(before.changes.added).toContain('pipelines.yaml');

    const check = await cli('core', 'check');
    expect(check.code).toBe(0);
    expect(check.stdout).toContain('check passed: 3 slot modules imported');
    const saved = await cli('core', 'save', '--message', 'the bundled core');
    expect(saved.stdout).toMatch(/^saved revision #1 [0-9a-f]{12}/);
    const first = await json<CoreStatusJson>('core', 'status');
    expect(first).toMatchObject({ number: 1, clean: true });
    expect((await cli('core', 'save')).stdout).toContain('nothing to save');

    // An edit shows in status and diff; save records it with its parent.
    appendFileSync(join(core, 'pipelines.yaml'), '# tuned\n');
    expect((await json<CoreStatusJson>('core', 'status')).changes).toEqual({
      added: [],
      changed: ['pipelines.yaml'],
      removed: [],
    });
    const diff = await cli('core', 'diff');
    expect(diff.stdout.split('\n')).toEqual(expect.arrayContaining(['--- a/pipelines.yaml', '+# tuned']));
    await cli('core', 'save', '--message', 'tuned');

    // A core whose module does not compile: check names it, save refuses and records nothing.
    writeFileSync(join(core, 'output', 'base_output', 'module.ts'), 'export default (ctx {\n');
    const failed = await cli('core', 'check');
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('slot base_output');
    expect(failed.stderr).toContain('does not compile');
    const headBefore = (await json<{ head: number }>('status')).head;
    const refused = await cli('core', 'save');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^demiurge: the core check failed, nothing was saved/);
    expect(refused.stderr).not.toContain('unexpected');
    expect((await json<{ head: number }>('status')).head).toBe(headBefore);

    // discard restores the working copy to the current revision.
    const discarded = await cli('core', 'discard');
    expect(discarded.stdout).toContain('restored');
    expect((await json<CoreStatusJson>('core', 'status')).clean).toBe(true);
    expect(readFileSync(join(core, 'pipelines.yaml'), 'utf8')).toContain('# tuned');

    // The core's own tests are part of the check.
    mkdirSync(join(core, 'tests'));
    writeFileSync(join(core, 'tests', 'ok.test.mjs'), "import test from 'node:test';\ntest('ok', () => {});\n");
    expect((await cli('core', 'check')).stdout).toContain('1 test files passed');
    writeFileSync(
      join(core, 'tests', 'bad.test.mjs'),
      "import test from 'node:test';\nimport assert from 'node:assert';\ntest('bad', () => assert.equal(1, 2));\n",
    );
    const failing = await cli('core', 'check');
    expect(failing.code).toBe(1);
    expect(failing.stderr).toContain('test tests/bad.test.mjs: exited 1');
    rmSync(join(core, 'tests'), { recursive: true });

    // rollback: an older revision becomes current as a new revision (same content, same id), working copy too.
    const rolled = await cli('core', 'rollback', '#1');
    expect(rolled.code).toBe(0);
    const versions = await json<VersionsJson>('core', 'versions');
    expect(versions.revisions.map((r) => [r.number, r.reason])).toEqual([
      [3, 'rollback'],
      [2, 'save'],
      [1, 'save'],
    ]);
    const [third, second, one] = versions.revisions as [Revision, Revision, Revision];
    expect(third).toMatchObject({ revision: one.revision, parent: second.revision, restoredFrom: one.revision });
    expect(second.parent).toBe(one.revision);
    expect(versions.current).toBe(one.revision);
    expect(readFileSync(join(core, 'pipelines.yaml'), 'utf8')).not.toContain('# tuned');
    expect((await cli('core', 'rollback', 'zzzz')).stderr).toContain('unknown core revision zzzz');

    // status (text and --json) shows the current revision.
    const status = await json<{ core: { id: string; revision: string; number: number } }>('status');
    expect(status.core).toEqual({ id: 'default', revision: one.revision, number: 3 });
    expect((await cli('status')).stdout).toContain(`core      default revision #3 ${one.revision.slice(0, 12)}`);
  }, 120_000);

  it('turns record their pinned revision; verify finds a turn whose revision is gone', async () => {
    h = coreHome();
    const { cli, json, home } = h;
    expect((await cli('run', 'unversioned')).code).toBe(0);
    await cli('core', 'save');
    const { current } = await json<VersionsJson>('core', 'versions');
    expect((await cli('run', 'pinned')).code).toBe(0);
    const pins = await turnPins(home);
    expect(pins[0]?.revision).toBeUndefined(); // no revision saved yet: the working copy ran
    expect(pins[1]).toMatchObject({ revision: current });
    expect(pins[1]?.slots.map((s) => s.id)).toEqual(['base_input', 'base_output', 'audit_log']);
    expect(await assistantTexts(home)).toEqual(['[fake] unversioned', '[fake] pinned']);
    expect((await cli('verify')).code).toBe(0);

    rmSync(join(home, 'core-store'), { recursive: true, force: true });
    expect(existsSync(join(home, 'core-store'))).toBe(false);
    const verify = await json<{ ok: boolean; invariants: { findings: { invariant: string; message: string }[] } }>(
      'verify',
    ).catch(async () => JSON.parse((await cli('verify', '--json')).stdout));
    expect(verify.ok).toBe(false);
    expect(verify.invariants.findings).toEqual([
      expect.objectContaining({
        invariant: 'turns-pinned-revisions-exist',
        message: expect.stringContaining('whose snapshot is gone'),
      }),
    ]);
  }, 120_000);
});
