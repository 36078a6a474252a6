import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CoreLoadError, loadCore } from '../src/index.js';
import { AGENT_DIR, coreFiles, removeTempDirs, tempDir, writeFiles } from './harness.js';

afterEach(removeTempDirs);

/** A temp core: the base files with `changes` applied (a null content deletes the file). */
function core(changes: Record<string, string | null> = {}): string {
  const dir = tempDir('demiurge-core-');
  const files: Record<string, string> = {
    ...coreFiles(
      { input: ['base_input'], output: ['base_output'] },
      { base_input: { phase: 'input' }, base_output: { phase: 'output' } },
    ),
  };
  for (const [path, content] of Object.entries(changes)) {
    if (content === null) delete files[path];
    else files[path] = content;
  }
  return writeFiles(dir, files);
}

/** The CoreLoadError loading `dir` throws. */
async function loadError(dir: string): Promise<CoreLoadError> {
  const error = await loadCore(dir).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CoreLoadError);
  expect((error as CoreLoadError).code).toBe('invalid_spec');
  return error as CoreLoadError;
}

const pipelines = (body: string) => `schema_version: 1\n${body}`;

describe('loadCore', () => {
  it('loads the default agent/ core', async () => {
    const agent = await loadCore(AGENT_DIR);
    expect(agent).toMatchObject({
      id: 'default',
      provider: 'fake',
      model: 'fake-1',
      limits: { stepBudget: 90, maxDelegationDepth: 2 },
      pipelines: {
        bootstrap: { serial: [] },
        input: { serial: ['base_input'], parallel: [] },
        output: { serial: ['base_output'], parallel: ['audit_log'] },
      },
    });
    expect(agent.instructions).toMatch(/You are Demiurge/);
    expect([...agent.slots.keys()]).toEqual(['base_input', 'base_output', 'audit_log']);
    expect(agent.slots.get('base_input')).toMatchObject({
      phase: 'input',
      mode: 'serial',
      entrypoint: join(agent.dir, 'input/base_input/module.ts'),
      failurePolicy: 'hard',
      timeoutSeconds: 10,
    });
    expect(agent.slots.get('audit_log')).toMatchObject({ mode: 'parallel', historyPolicy: 'transient' });
    expect(agent.revision).toMatch(/^[0-9a-f]{64}$/);
  });

  it('loads any directory as a core, with defaults for what slot.yaml leaves out, and a revision that follows the files', async () => {
    const dir = core({ 'input/base_input/slot.yaml': '' });
    const loaded = await loadCore(dir);
    expect(loaded.slots.get('base_input')).toMatchObject({
      timeoutSeconds: 30,
      failurePolicy: 'soft',
      historyPolicy: 'persist',
      capabilities: [],
      description: '',
    });
    writeFiles(dir, { 'input/base_input/module.ts': 'export default async () => { /* changed */ };\n' });
    expect((await loadCore(dir)).revision).not.toBe(loaded.revision);
  });

  it('refuses an unknown phase, naming pipelines.yaml and the line', async () => {
    const dir = core({
      'pipelines.yaml': pipelines('input:\n  serial: [base_input]\npreinput:\n  serial: []\n'),
    });
    const error = await loadError(dir);
    expect(error.message).toContain(`${join(dir, 'pipelines.yaml')}:4: unknown key "preinput"`);
    expect(error.message).toContain('allowed: schema_version, bootstrap, input, output');
    expect(error).toMatchObject({ file: join(dir, 'pipelines.yaml'), line: 4, path: ['preinput'] });
  });

  it('refuses an unknown lane key inside a phase', async () => {
    const error = await loadError(core({ 'pipelines.yaml': pipelines('input:\n  serial: []\n  sequential: []\n') }));
    expect(error.message).toMatch(/pipelines\.yaml:4: unknown key "sequential" in input; allowed: serial, parallel/);
  });

  it('refuses bootstrap.parallel', async () => {
    const error = await loadError(core({ 'pipelines.yaml': pipelines('bootstrap:\n  serial: []\n  parallel: []\n') }));
    expect(error.message).toMatch(/pipelines\.yaml:4: bootstrap has no parallel lane/);
  });

  it('refuses unknown keys in agent.yaml and slot.yaml, naming the file and line', async () => {
    const agent = await loadError(core({ 'agent.yaml': 'id: test\nname: Test\nsystem_prompt: hi\n' }));
    expect(agent.message).toMatch(/agent\.yaml:3: unknown key "system_prompt"; allowed: id, name, description/);
    const dir = core({ 'output/base_output/slot.yaml': 'entrypoint: module.ts\ntimeout: 5\n' });
    const slot = await loadError(dir);
    expect(slot.message).toContain(`${join(dir, 'output/base_output/slot.yaml')}:2: unknown key "timeout"`);
  });

  it('refuses bad values, naming the line', async () => {
    const error = await loadError(
      core({ 'input/base_input/slot.yaml': 'failure_policy: soft\ntimeout_seconds: -1\n' }),
    );
    expect(error.message).toMatch(/base_input\/slot\.yaml:2: timeout_seconds: Too small/);
    const policy = await loadError(core({ 'input/base_input/slot.yaml': 'history_policy: forever\n' }));
    expect(policy.message).toMatch(/slot\.yaml:1: history_policy: /);
    const version = await loadError(core({ 'pipelines.yaml': 'schema_version: 2\n' }));
    expect(version.message).toMatch(/pipelines\.yaml:1: schema_version: /);
  });

  it('refuses invalid YAML at its line', async () => {
    const error = await loadError(core({ 'pipelines.yaml': 'schema_version: 1\ninput:\n  serial: [base_input\n' }));
    expect(error.message).toMatch(/pipelines\.yaml:\d+: invalid YAML/);
    expect(error.line).toBeGreaterThan(1);
  });

  it('refuses a missing agent.yaml or pipelines.yaml', async () => {
    const dir = core({ 'agent.yaml': null });
    expect((await loadError(dir)).message).toContain(`${join(dir, 'agent.yaml')}: missing file`);
    expect((await loadError(core({ 'pipelines.yaml': null }))).message).toMatch(/pipelines\.yaml: missing file/);
  });

  it('refuses an unknown slot id', async () => {
    const error = await loadError(
      core({ 'pipelines.yaml': pipelines('input:\n  serial: [base_input, spell_check]\n') }),
    );
    expect(error.message).toMatch(
      /pipelines\.yaml:3: unknown slot id "spell_check": there is no folder input\/spell_check\//,
    );
    expect(error.path).toEqual(['input', 'serial', 1]);
  });

  it('refuses a slot id listed twice in a phase', async () => {
    const error = await loadError(
      core({
        'pipelines.yaml': pipelines('input:\n  serial:\n    - base_input\n  parallel:\n    - base_input\n'),
      }),
    );
    expect(error.message).toMatch(
      /pipelines\.yaml:6: duplicate slot id "base_input": already listed as input\.serial\[0\] \(line 4\)/,
    );
  });

  it('refuses a slot listed in two phases', async () => {
    const error = await loadError(
      core({
        'pipelines.yaml': pipelines('input:\n  serial: [base_input]\noutput:\n  serial: [base_output, base_input]\n'),
      }),
    );
    expect(error.message).toMatch(/pipelines\.yaml:5: slot "base_input" is listed in both input \(line 3\) and output/);
  });

  it('refuses a slot folder under the wrong phase', async () => {
    const dir = core({
      'pipelines.yaml': pipelines('input:\n  serial: [base_input, base_output]\n'),
    });
    const error = await loadError(dir);
    expect(error.message).toMatch(
      /pipelines\.yaml:3: slot "base_output" is listed under input but its folder is output\/base_output\//,
    );
  });

  it('refuses the same slot id in two phase folders', async () => {
    const dir = core({
      'output/base_input/slot.yaml': '',
      'output/base_input/module.ts': 'export default () => {};\n',
    });
    const error = await loadError(dir);
    expect(error.file).toBe(join(dir, 'output/base_input'));
    expect(error.message).toMatch(/duplicate slot id "base_input": there is also a folder input\/base_input\//);
  });

  it('refuses slot ids that are not plain names, in pipelines.yaml and as folders', async () => {
    const listed = await loadError(core({ 'pipelines.yaml': pipelines('input:\n  serial: [../escape]\n') }));
    expect(listed.message).toMatch(/pipelines\.yaml:3: input\.serial\.0: a slot id is a plain name/);
    const upper = await loadError(core({ 'pipelines.yaml': pipelines('output:\n  serial: [Base_Output]\n') }));
    expect(upper.message).toMatch(/pipelines\.yaml:3: output\.serial\.0: a slot id is a plain name/);
    const dir = core({ 'input/Spell-Check/slot.yaml': '' });
    const folder = await loadError(dir);
    expect(folder.file).toBe(join(dir, 'input/Spell-Check'));
    expect(folder.message).toMatch(/slot folder "Spell-Check" is not a plain slot id/);
    // Helper folders starting with _ or . are not slots.
    await expect(loadCore(core({ 'input/_shared/util.ts': 'export const x = 1;\n' }))).resolves.toBeDefined();
  });

  it('refuses a missing slot.yaml', async () => {
    const dir = core({ 'output/base_output/slot.yaml': null });
    const error = await loadError(dir);
    expect(error.message).toBe(
      `${join(dir, 'output/base_output/slot.yaml')}: missing slot.yaml: slot "base_output" is listed in pipelines.yaml (line 8) and needs a manifest`,
    );
  });

  it('refuses a missing module, naming slot.yaml and the module', async () => {
    const dir = core({ 'input/base_input/module.ts': null });
    const error = await loadError(dir);
    expect(error.message).toContain(
      `${join(dir, 'input/base_input/slot.yaml')}:1: missing module: entrypoint "module.ts"`,
    );
    expect(error.message).toContain(join(dir, 'input/base_input/module.ts'));
    const defaulted = core({
      'input/base_input/slot.yaml': 'timeout_seconds: 3\n',
      'input/base_input/module.ts': null,
    });
    expect((await loadError(defaulted)).message).toMatch(
      /base_input\/slot\.yaml: missing module: entrypoint "module\.ts"/,
    );
  });

  it('refuses a module outside the core directory, by path or by symlink', async () => {
    const outside = tempDir('demiurge-outside-');
    writeFiles(outside, { 'evil.ts': 'export default async () => {};\n' });
    const dotdot = core({ 'input/base_input/slot.yaml': 'description: x\nentrypoint: ../../../evil.ts\n' });
    const byPath = await loadError(dotdot);
    expect(byPath.message).toMatch(
      /base_input\/slot\.yaml:2: entrypoint "\.\.\/\.\.\/\.\.\/evil\.ts" resolves to .* outside the core/,
    );
    const absolute = await loadError(
      core({ 'input/base_input/slot.yaml': `entrypoint: ${join(outside, 'evil.ts')}\n` }),
    );
    expect(absolute.message).toMatch(/slot\.yaml:1: entrypoint .* outside the core directory/);

    const linked = core({ 'input/base_input/module.ts': null });
    symlinkSync(join(outside, 'evil.ts'), join(linked, 'input/base_input/module.ts'));
    const bySymlink = await loadError(linked);
    expect(bySymlink.message).toMatch(
      /base_input\/slot\.yaml:1: entrypoint "module\.ts" is a symlink to .*evil\.ts, outside the core/,
    );

    const folderLink = core({});
    rmSync(join(folderLink, 'input/base_input'), { recursive: true });
    mkdirSync(join(outside, 'slot'));
    writeFiles(outside, { 'slot/slot.yaml': '', 'slot/module.ts': 'export default async () => {};\n' });
    symlinkSync(join(outside, 'slot'), join(folderLink, 'input/base_input'));
    expect((await loadError(folderLink)).message).toMatch(/is a symlink to .*outside the core/);
  });

  it('refuses a module that is not TypeScript or JavaScript', async () => {
    const dir = core({ 'input/base_input/slot.yaml': 'entrypoint: module.py\n', 'input/base_input/module.py': 'x' });
    expect((await loadError(dir)).message).toMatch(
      /slot\.yaml:1: entrypoint "module\.py" must be a \.ts, \.mts, \.js, \.mjs module/,
    );
  });

  it('refuses a directory that does not exist', async () => {
    const error = await loadError('/nonexistent/demiurge-core');
    expect(error.message).toBe('/nonexistent/demiurge-core: the core directory does not exist');
  });
});
