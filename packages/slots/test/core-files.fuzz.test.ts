import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fuzzSettings, mutatedDocument, yamlText } from '@demiurge/contracts/testing';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { CoreLoadError, loadCore } from '../src/index.js';
import { coreFiles, removeTempDirs, tempDir, writeFiles } from './harness.js';

/** The files of an Agent Core a person edits, each from its real shape (docs/slots.md, docs/mcp.md). */
const slotId = fc.constantFrom('base_input', 'base_output', 'unlisted', 'missing', 'Bad-Id', '', '_helper');
const surfaces = {
  'agent.yaml': fc.record(
    {
      id: fc.constantFrom('test', 'my-core'),
      name: fc.constantFrom('Test', 'A core'),
      description: fc.string({ maxLength: 20 }),
      provider: fc.constantFrom('fake', 'openai'),
      model: fc.constant('fake-1'),
      instructions: fc.string({ maxLength: 40 }),
      limits: fc.record(
        { step_budget: fc.integer({ min: 1, max: 100 }), max_delegation_depth: fc.nat(3) },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: ['id', 'name'] },
  ),
  'pipelines.yaml': fc.record(
    {
      schema_version: fc.constant(1),
      bootstrap: fc.record({ serial: fc.array(slotId, { maxLength: 2 }) }),
      input: fc.record({ serial: fc.constant(['base_input']), parallel: fc.array(slotId, { maxLength: 2 }) }),
      output: fc.record({ serial: fc.constant(['base_output']), parallel: fc.array(slotId, { maxLength: 2 }) }),
    },
    { requiredKeys: ['schema_version'] },
  ),
  'mcp.yaml': fc.record({
    schema_version: fc.constant(1),
    servers: fc.dictionary(
      fc.constantFrom('fs', 'web', 'a__b', 'Upper', 'x'.repeat(30)),
      fc.oneof(
        fc.record(
          {
            command: fc.constant('node'),
            args: fc.array(fc.string({ maxLength: 8 }), { maxLength: 2 }),
            env: fc.dictionary(fc.constantFrom('A', 'B'), fc.string({ maxLength: 4 })),
            cwd: fc.constant('.'),
            startup_timeout_seconds: fc.integer({ min: 1, max: 600 }),
            max_restarts: fc.nat(100),
          },
          { requiredKeys: ['command'] },
        ),
        fc.record(
          { url: fc.constantFrom('http://127.0.0.1:9/mcp', 'ftp://x'), headers: fc.constant({ A: 'b' }) },
          { requiredKeys: ['url'] },
        ),
      ),
      { maxKeys: 2 },
    ),
  }),
  'input/base_input/slot.yaml': fc.record(
    {
      entrypoint: fc.constantFrom('module.ts', 'module.js', '../../agent.yaml', '/etc/passwd', 'nope.ts'),
      description: fc.string({ maxLength: 10 }),
      timeout_seconds: fc.integer({ min: 1, max: 86_400 }),
      failure_policy: fc.constantFrom('soft', 'hard'),
      history_policy: fc.constantFrom('persist', 'model_hidden', 'transient'),
      capabilities: fc.array(fc.string({ minLength: 1, maxLength: 6 }), { maxLength: 2 }),
    },
    { requiredKeys: [] },
  ),
} as const;
type Surface = keyof typeof surfaces;

const dir = tempDir('demiurge-core-fuzz-');
const base = coreFiles(
  { input: ['base_input'], output: ['base_output'] },
  { base_input: { phase: 'input' }, base_output: { phase: 'output' }, unlisted: { phase: 'input' } },
);
afterAll(removeTempDirs);

/** Loads the core with `text` as `surface`, the other files valid: nothing, or the CoreLoadError. */
async function load(surface: Surface, text: string): Promise<CoreLoadError | undefined> {
  rmSync(join(dir, 'mcp.yaml'), { force: true });
  writeFiles(dir, base);
  writeFileSync(join(dir, surface), text);
  try {
    await loadCore(dir);
    return undefined;
  } catch (error) {
    if (error instanceof CoreLoadError) return error;
    throw new Error(`loadCore threw ${String(error)} (not a CoreLoadError) for ${surface}:\n${text.slice(0, 2000)}`, {
      cause: error,
    });
  }
}

const warnings: string[] = [];
process.on('warning', (w) => warnings.push(w.message));

describe('Agent Core files fuzz (agent.yaml, pipelines.yaml, mcp.yaml, slot.yaml)', () => {
  for (const surface of Object.keys(surfaces) as Surface[]) {
    it(`${surface}: loads or refuses with a CoreLoadError naming the file, the line and the field`, async () => {
      await fc.assert(
        fc.asyncProperty(yamlText(mutatedDocument(surfaces[surface])), async (text) => {
          const error = await load(surface, text);
          expect(({} as Record<string, unknown>).polluted).toBeUndefined();
          if (!error) return;
          expect(error.file.startsWith(dir)).toBe(true);
          expect(error.message.startsWith(error.line === undefined ? error.file : `${error.file}:${error.line}`)).toBe(
            true,
          );
          expect(error.detail).not.toBe('');
          expect(error.message).not.toMatch(/\[object |\bundefined\b|unexpected error|\n\s+at /i);
          expect(error.message.length).toBeLessThan(1200);
        }),
        fuzzSettings(`core ${surface}`, 60),
      );
      await new Promise((r) => setImmediate(r));
      expect(warnings).toEqual([]);
    });
  }

  it.each(Object.keys(surfaces) as Surface[])(
    'regression (fuzz): an alias bomb in %s is a CoreLoadError',
    async (s) => {
      const bomb = stringify({ a: ['x', 'x'] }).replace('a:', 'a: &a') + 'b: [*a, *a, *a]\n'.repeat(1);
      const text = `${bomb}${yamlBomb()}`;
      const error = await load(s, text);
      expect(error).toBeInstanceOf(CoreLoadError);
      expect(error?.message).toContain(join(dir, s));
      expect(error?.message).toMatch(/invalid YAML: Excessive alias count/);
    },
  );
});

describe('Agent Core files fuzz: regressions', () => {
  it('regression (fuzz): a missing required field is "missing", not "received undefined"', async () => {
    const error = await load('agent.yaml', 'name: Test\n');
    expect(error?.message).toBe(`${join(dir, 'agent.yaml')}:1: id: missing (a string is required)`);
  });
});

function yamlBomb(): string {
  const lines = ['c: &c [x,x,x,x,x,x,x,x,x]'];
  for (let i = 3; i < 11; i++) {
    const prev = String.fromCharCode(96 + i);
    const next = String.fromCharCode(97 + i);
    lines.push(`${next}: &${next} [*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev}]`);
  }
  return `${lines.join('\n')}\n`;
}
