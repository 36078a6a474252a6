import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';

/** A fresh folder under the OS temp dir, and a way to remove it. */
export function tempDir(prefix = 'demiurge-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/**
 * A fresh folder for every test of the file, removed after it: `use` gets the store file's path in it
 * (`runtime.sqlite3`, not created) and the folder, before each test.
 * @example
 * let path: string;
 * storeFileEachTest((file) => { path = file; });
 */
export function storeFileEachTest(use: (path: string, dir: string) => void): void {
  let dir: ReturnType<typeof tempDir> | undefined;
  beforeEach(() => {
    dir = tempDir();
    use(join(dir.path, 'runtime.sqlite3'), dir.path);
  });
  afterEach(() => dir?.remove());
}
