import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { UnknownRevisionError } from './revision-errors.js';

/** The files of a core: relative path (with `/`) → content. */
export type CoreFiles = ReadonlyMap<string, Buffer>;

/** Folders never part of a core snapshot (installed or generated, not authored). */
const SKIPPED = new Set(['node_modules', '.git', 'dist']);

/** Reads every authored file of a core directory (recursively; `node_modules`, `.git`, `dist` skipped). */
export async function readCoreFiles(dir: string): Promise<CoreFiles> {
  const files = new Map<string, Buffer>();
  const walk = async (at: string): Promise<void> => {
    for (const entry of (await readdir(at, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED.has(entry.name)) await walk(path);
      } else if (entry.isFile() || (entry.isSymbolicLink() && (await stat(path)).isFile())) {
        files.set(relative(dir, path).split(sep).join('/'), await readFile(path));
      }
    }
  };
  await walk(dir);
  return files;
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** The manifest of a snapshot: its files' paths and blob hashes, sorted; the revision is its sha-256. */
function manifestOf(files: CoreFiles): { text: string; blobs: [string, string][] } {
  const blobs = [...files.entries()]
    .map(([path, content]): [string, string] => [path, sha256(content)])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { text: `${JSON.stringify({ version: 1, files: blobs.map(([path, blob]) => ({ path, blob })) })}\n`, blobs };
}

/** The revision a set of files would have (without storing anything). */
export function revisionOf(files: CoreFiles): string {
  return sha256(manifestOf(files).text);
}

/** Writes `content` to `path` atomically (a temporary file renamed over it), creating its folder. */
async function writeAtomic(path: string, content: string | Buffer): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${randomUUID()}.tmp`;
  await writeFile(tmp, content, { flush: true });
  await rename(tmp, path);
}

/**
 * The content-addressed store of core snapshots under a home (`<home>/core-store`): `blobs/<sha256>` holds
 * each file content once, `revisions/<revision>.json` each snapshot's manifest (the revision is the manifest's
 * sha-256), `checkouts/<revision>/` a materialised copy a host runs. Everything is written before the
 * `core.revision_saved` event that names it, and never changed after: a crash leaves at worst unreferenced
 * objects, never a revision half written.
 *
 * @example
 * ```ts
 * const snapshots = new CoreSnapshotStore(join(home, 'core-store'));
 * const revision = await snapshots.put(await readCoreFiles('agent'));
 * const dir = await snapshots.checkout(revision); // a core directory loadCore can load
 * ```
 */
export class CoreSnapshotStore {
  constructor(readonly root: string) {}

  /** Stores the files as a snapshot (blobs first, then the manifest); returns its revision. Idempotent. */
  async put(files: CoreFiles): Promise<string> {
    const { text, blobs } = manifestOf(files);
    for (const [path, blob] of blobs) {
      const at = join(this.root, 'blobs', blob);
      if (!existsSync(at)) await writeAtomic(at, files.get(path) as Buffer);
    }
    const revision = sha256(text);
    const manifest = this.manifestPath(revision);
    if (!existsSync(manifest)) await writeAtomic(manifest, text);
    return revision;
  }

  /** Whether the revision's manifest and every blob it names are stored. */
  async has(revision: string): Promise<boolean> {
    try {
      const blobs = await this.blobsOf(revision);
      return blobs.every(({ blob }) => existsSync(join(this.root, 'blobs', blob)));
    } catch {
      return false;
    }
  }

  /** The files of a stored revision (`UnknownRevisionError` when it is not stored). */
  async files(revision: string): Promise<CoreFiles> {
    const files = new Map<string, Buffer>();
    for (const { path, blob } of await this.blobsOf(revision)) {
      files.set(path, await readFile(join(this.root, 'blobs', blob)));
    }
    return files;
  }

  /**
   * A directory holding the revision's files, for a host to load and run (`<root>/checkouts/<revision>`):
   * materialised once, in a temporary folder renamed into place, so a checkout is whole or absent.
   */
  async checkout(revision: string): Promise<string> {
    const dir = join(this.root, 'checkouts', revision);
    if (existsSync(dir)) return dir;
    const files = await this.files(revision);
    const tmp = `${dir}.${randomUUID()}.tmp`;
    await writeFiles(tmp, files);
    try {
      await rename(tmp, dir);
    } catch (err) {
      await rm(tmp, { recursive: true, force: true });
      if (!existsSync(dir)) throw err; // another process materialised it first: fine
    }
    return dir;
  }

  private manifestPath(revision: string): string {
    return join(this.root, 'revisions', `${revision}.json`);
  }

  private async blobsOf(revision: string): Promise<{ path: string; blob: string }[]> {
    let text: string;
    try {
      text = await readFile(this.manifestPath(revision), 'utf8');
    } catch (err) {
      throw new UnknownRevisionError(revision, `its snapshot is not in ${this.root}`, { cause: err });
    }
    return (JSON.parse(text) as { files: { path: string; blob: string }[] }).files;
  }
}

/** Writes the files into `dir` (created). */
export async function writeFiles(dir: string, files: CoreFiles): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const [path, content] of files) {
    const at = join(dir, ...path.split('/'));
    await mkdir(dirname(at), { recursive: true });
    await writeFile(at, content);
  }
}

/**
 * Makes the core directory `dir` hold exactly `files`: changed and missing files written, files the
 * snapshot does not have removed (skipped folders such as `node_modules` are left alone).
 */
export async function restoreFiles(dir: string, files: CoreFiles): Promise<void> {
  const current = await readCoreFiles(dir);
  for (const [path] of current) if (!files.has(path)) await rm(join(dir, ...path.split('/')), { force: true });
  for (const [path, content] of files) {
    const before = current.get(path);
    if (before?.equals(content)) continue;
    await writeAtomic(join(dir, ...path.split('/')), content);
  }
  await removeEmptyFolders(dir);
}

async function removeEmptyFolders(dir: string): Promise<boolean> {
  let empty = true;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && !SKIPPED.has(entry.name) && (await removeEmptyFolders(join(dir, entry.name)))) {
      await rm(join(dir, entry.name), { recursive: true, force: true });
    } else empty = false;
  }
  return empty;
}
