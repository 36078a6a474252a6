import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { coreFileChanges, summarizeChanges, unifiedDiff } from './core-diff.js';
import { CoreSnapshotStore, readCoreFiles, restoreFiles, revisionOf } from './core-snapshot.js';
import { UnknownRevisionError } from './revision-errors.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'demiurge-snapshots-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function write(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

describe('the content-addressed core snapshot store', () => {
  it('names a snapshot by its content, stores it once, and materialises it whole', async () => {
    const core = join(dir, 'core');
    write(core, { 'agent.yaml': 'id: a\n', 'input/x/slot.yaml': 'entrypoint: m.mjs\n', 'node_modules/y/z.js': 'skip' });
    const files = await readCoreFiles(core);
    expect([...files.keys()]).toEqual(['agent.yaml', 'input/x/slot.yaml']);
    const store = new CoreSnapshotStore(join(dir, 'store'));
    const revision = await store.put(files);
    expect(revision).toMatch(/^[0-9a-f]{64}$/);
    expect(revision).toBe(revisionOf(files));
    expect(await store.put(files)).toBe(revision);
    expect(await store.has(revision)).toBe(true);
    const checkout = await store.checkout(revision);
    expect(readFileSync(join(checkout, 'input', 'x', 'slot.yaml'), 'utf8')).toBe('entrypoint: m.mjs\n');
    expect(await store.has('f'.repeat(64))).toBe(false);
    await expect(store.files('f'.repeat(64))).rejects.toBeInstanceOf(UnknownRevisionError);
  });

  it('restores a directory to a snapshot (changed written, extra removed) and diffs two versions', async () => {
    const core = join(dir, 'core');
    write(core, { 'agent.yaml': 'id: a\n', 'pipelines.yaml': 'a\nb\nc\n' });
    const before = await readCoreFiles(core);
    write(core, { 'pipelines.yaml': 'a\nB\nc\n', 'output/new/slot.yaml': 'x\n' });
    const after = await readCoreFiles(core);
    const changes = coreFileChanges(before, after);
    expect(changes).toEqual({ added: ['output/new/slot.yaml'], changed: ['pipelines.yaml'], removed: [] });
    expect(summarizeChanges(changes)).toBe('+1 ~1 -0: output/new/slot.yaml, pipelines.yaml');
    expect(unifiedDiff(before, after)).toEqual([
      '--- /dev/null',
      '+++ b/output/new/slot.yaml',
      '+x',
      '--- a/pipelines.yaml',
      '+++ b/pipelines.yaml',
      ' a',
      '-b',
      '+B',
      ' c',
    ]);
    await restoreFiles(core, before);
    expect(revisionOf(await readCoreFiles(core))).toBe(revisionOf(before));
    expect(existsSync(join(core, 'output'))).toBe(false);
  });
});
