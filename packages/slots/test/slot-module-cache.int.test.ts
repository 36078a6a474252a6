import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SlotSpec } from '../src/agent-core.js';
import { createSlotModuleLoader, SlotModuleError, type SlotModuleLoad } from '../src/index.js';
import { removeTempDirs, tempDir, writeFiles } from './harness.js';

afterEach(() => removeTempDirs());

const spec = (entrypoint: string, id = 'greet'): SlotSpec => ({ id, entrypoint }) as SlotSpec;

/** Calls a loaded slot function with a context that records `add_context` texts. */
async function contextOf(fn: (ctx: never) => unknown): Promise<string[]> {
  const added: string[] = [];
  await fn({ input: { add_context: (text: string) => added.push(text) } } as never);
  return added;
}

/** A loader on `cacheDir` that records how each module was loaded. */
function loader(cacheDir: string) {
  const loads: SlotModuleLoad[] = [];
  return { modules: createSlotModuleLoader({ cacheDir, onLoad: (l) => loads.push(l) }), loads };
}

const compiledFiles = (cacheDir: string) => readdirSync(cacheDir).filter((f) => f.endsWith('.mjs'));

describe('compiled TypeScript slot modules are cached by content', () => {
  it('compiles once; a later loader (a new host start) imports the cached file without compiling', async () => {
    const core = writeFiles(tempDir(), {
      'input/greet/module.ts': [
        "import { prefix } from '../_shared/prefix.ts';",
        'export default async function greet(ctx: { input: { add_context(t: string): void } }): Promise<void> {',
        '  ctx.input.add_context(prefix + "hello");',
        '}',
        '',
      ].join('\n'),
      'input/_shared/prefix.ts': "export const prefix: string = '> ';\n",
    });
    const cacheDir = join(tempDir(), 'cache', 'slots');
    const entry = join(core, 'input/greet/module.ts');

    const first = loader(cacheDir);
    expect(await contextOf(await first.modules.load(spec(entry)))).toEqual(['> hello']);
    expect(first.loads).toMatchObject([{ slotId: 'greet', source: 'compiled' }]);
    const [file] = compiledFiles(cacheDir);
    expect(file).toMatch(/^[0-9a-f]{64}\.mjs$/);
    expect(first.loads[0]!.file).toBe(join(cacheDir, file!));
    const written = statSync(join(cacheDir, file!)).mtimeMs;
    const manifest = JSON.parse(
      readFileSync(join(cacheDir, readdirSync(cacheDir).find((f) => f.endsWith('.json'))!), 'utf8'),
    );
    expect(manifest.inputs.map((i: { path: string }) => i.path)).toEqual([
      entry,
      join(core, 'input/_shared/prefix.ts'),
    ]);

    const second = loader(cacheDir);
    expect(await contextOf(await second.modules.load(spec(entry)))).toEqual(['> hello']);
    expect(second.loads).toMatchObject([{ source: 'cache', file: join(cacheDir, file!) }]);
    expect(statSync(join(cacheDir, file!)).mtimeMs).toBe(written);
    expect(compiledFiles(cacheDir)).toEqual([file]);
  });

  it('recompiles when the entrypoint or a file it imports changes, and drops the module it replaces', async () => {
    const core = writeFiles(tempDir(), {
      'input/greet/module.ts':
        "import { word } from './word.ts';\nexport default (ctx: any) => ctx.input.add_context(word);\n",
      'input/greet/word.ts': "export const word = 'v1';\n",
    });
    const cacheDir = join(tempDir(), 'cache');
    const entry = join(core, 'input/greet/module.ts');
    await loader(cacheDir).modules.load(spec(entry));
    const [v1] = compiledFiles(cacheDir);

    writeFiles(core, { 'input/greet/word.ts': "export const word = 'v2';\n" });
    const afterImportEdit = loader(cacheDir);
    expect(await contextOf(await afterImportEdit.modules.load(spec(entry)))).toEqual(['v2']);
    expect(afterImportEdit.loads[0]!.source).toBe('compiled');
    const [v2] = compiledFiles(cacheDir);
    expect(v2).not.toBe(v1);

    writeFiles(core, { 'input/greet/module.ts': "export default (ctx: any) => ctx.input.add_context('v3');\n" });
    const afterEntryEdit = loader(cacheDir);
    expect(await contextOf(await afterEntryEdit.modules.load(spec(entry)))).toEqual(['v3']);
    expect(afterEntryEdit.loads[0]!.source).toBe('compiled');
    expect(compiledFiles(cacheDir)).toHaveLength(1);
    expect(compiledFiles(cacheDir)).not.toContain(v2);

    const again = loader(cacheDir);
    await again.modules.load(spec(entry));
    expect(again.loads[0]!.source).toBe('cache');
  });

  it('keeps import.meta naming the source file, and imports packages from the slot folder', async () => {
    const core = writeFiles(tempDir(), {
      'input/greet/module.ts': [
        "import { readFileSync } from 'node:fs';",
        "import { join } from 'node:path';",
        "import shout from 'shout';",
        'export default (ctx: any) =>',
        "  ctx.input.add_context(shout(readFileSync(join(import.meta.dirname, 'note.txt'), 'utf8').trim()));",
        '',
      ].join('\n'),
      'input/greet/note.txt': 'beside the module\n',
      'node_modules/shout/package.json': '{ "name": "shout", "type": "module", "exports": "./index.js" }\n',
      'node_modules/shout/index.js': 'export default (text) => text.toUpperCase();\n',
    });
    const cacheDir = join(tempDir(), 'cache');
    for (const source of ['compiled', 'cache']) {
      const l = loader(cacheDir);
      expect(await contextOf(await l.modules.load(spec(join(core, 'input/greet/module.ts'))))).toEqual([
        'BESIDE THE MODULE',
      ]);
      expect(l.loads[0]!.source).toBe(source);
    }
  });

  it('runs a CommonJS-shaped TypeScript module (module.exports, require) as well', async () => {
    const core = writeFiles(tempDir(), {
      'input/greet/module.ts': [
        "const { basename } = require('node:path');",
        'module.exports = async (ctx: any) => ctx.input.add_context(basename(__filename));',
        '',
      ].join('\n'),
    });
    const l = loader(join(tempDir(), 'cache'));
    expect(await contextOf(await l.modules.load(spec(join(core, 'input/greet/module.ts'))))).toEqual(['module.ts']);
  });

  it('refuses a module that does not compile, naming the file and line, and caches nothing', async () => {
    const core = writeFiles(tempDir(), { 'input/greet/module.ts': 'export default (ctx: any) => {\n  ctx.(;\n};\n' });
    const cacheDir = join(tempDir(), 'cache');
    const error = await loader(cacheDir)
      .modules.load(spec(join(core, 'input/greet/module.ts')))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SlotModuleError);
    expect((error as Error).message).toMatch(/module\.ts: it does not compile: .*module\.ts:2: /);
    expect(() => readdirSync(cacheDir)).toThrow();
  });
});
