import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectCompletion } from './collect.js';
import { FakeScriptError } from './errors.js';
import { createFakeProvider } from './fake.js';
import { loadFakeScript } from './fake-script.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'demiurge-fake-script-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

async function scriptError(path: string): Promise<FakeScriptError> {
  const error = await loadFakeScript(path).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(FakeScriptError);
  return error as FakeScriptError;
}

describe('loadFakeScript', () => {
  it('reads a YAML script that a fake provider then plays', async () => {
    const path = await file(
      'greet.yaml',
      [
        '# the first turn calls a tool, the second answers',
        '- content: Looking.',
        '  tool_calls:',
        '    - name: read_file',
        '      arguments: { path: README.md }',
        '- content: It is a readme.',
        '',
      ].join('\n'),
    );
    const script = await loadFakeScript(path);
    expect(script).toEqual([
      { content: 'Looking.', tool_calls: [{ name: 'read_file', arguments: { path: 'README.md' } }] },
      { content: 'It is a readme.' },
    ]);
    const completion = await collectCompletion(
      createFakeProvider({ script }).complete({ messages: [{ role: 'user', content: 'what?' }], tools: [] }),
    );
    expect(completion.toolCalls).toEqual([{ id: 'call_0_0', name: 'read_file', arguments: { path: 'README.md' } }]);
  });

  it('reads the same script written as JSON', async () => {
    const path = await file(
      'greet.json',
      JSON.stringify([{ tool_calls: [{ name: 'list_dir', arguments: { path: '.' } }] }, { content: 'Done.' }], null, 2),
    );
    expect(await loadFakeScript(path)).toEqual([
      { tool_calls: [{ name: 'list_dir', arguments: { path: '.' } }] },
      { content: 'Done.' },
    ]);
  });

  it('names the file, the field and the line of a step that does not match', async () => {
    const path = await file('bad-field.yaml', '- content: fine\n- tool_calls:\n    - name: 42\n');
    const error = await scriptError(path);
    expect(error).toMatchObject({ file: path, path: [1, 'tool_calls', 0, 'name'], line: 3, code: 'invalid_spec' });
    expect(error.message).toBe(
      `invalid fake script ${path} at [1].tool_calls[0].name (line 3): Invalid input: expected string, received number`,
    );
  });

  it('points a missing or misspelled field at the step it belongs to', async () => {
    const missing = await scriptError(await file('missing.yaml', '- content: a\n- tool_calls:\n    - arguments: {}\n'));
    expect(missing).toMatchObject({ path: [1, 'tool_calls', 0, 'name'], line: 3 });
    const typo = await scriptError(await file('typo.json', '[\n  {"content": "a"},\n  {"tool_call": []}\n]'));
    expect(typo).toMatchObject({ path: [1], line: 3 });
    expect(typo.message).toContain('tool_call');
  });

  it('rejects a syntax error with its line, a non-list and an empty file', async () => {
    const syntax = await scriptError(await file('syntax.json', '[\n  {"content": "a"},,\n]'));
    expect(syntax.line).toBe(2);
    expect(syntax.message).toBe(
      `invalid fake script ${syntax.file} (line 2): not valid YAML or JSON: Unexpected , in flow sequence`,
    );
    const notList = await scriptError(await file('object.yaml', 'content: a\n'));
    expect(notList.message).toContain('expected array');
    const empty = await scriptError(await file('empty.yaml', ''));
    expect(empty.message).toContain('the file is empty; expected a list of steps');
  });

  it('names a file it cannot read', async () => {
    const path = join(dir, 'nope.yaml');
    const error = await scriptError(path);
    expect(error.message).toMatch(new RegExp(`^invalid fake script ${path}: cannot read the file \\(ENOENT`));
  });
});
