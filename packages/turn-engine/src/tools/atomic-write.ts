import { randomBytes } from 'node:crypto';
import { open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Writes `content` to `target` atomically: into a temporary file beside it (same directory, so the same
 * file system), flushed to disk, then renamed over `target`. A reader sees the old file or the new one,
 * never half of it; a crash leaves at most a stray `.<name>.<random>.tmp`. An existing file keeps its mode.
 * `target` must be a real path (no symlink at its end): the rename replaces whatever entry is there.
 *
 * @example
 * ```ts
 * await writeFileAtomic('/work/ws/src/a.ts', 'export {};\n');
 * ```
 */
export async function writeFileAtomic(target: string, content: string): Promise<void> {
  const mode = await stat(target).then(
    (s) => s.mode & 0o7777,
    () => undefined,
  );
  const temp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await open(temp, 'wx', mode ?? 0o666);
    try {
      await handle.writeFile(content, 'utf8');
      if (mode !== undefined) await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
