import { lstat, readlink, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { ToolFailedError, WorkspaceEscapeError } from './errors.js';

export interface ResolveOptions {
  /** The target must exist (a read, an edit, a working directory). Default false. */
  readonly mustExist?: boolean;
  /** The target will be written: it must not be a directory (nor the root itself). Default false. */
  readonly forWrite?: boolean;
}

/** How many symlinks a path may go through before it counts as a loop (Linux uses 40 too). */
const MAX_SYMLINK_HOPS = 40;

/**
 * Resolves `path` (relative to `root`, or absolute) to its real absolute path and refuses it unless that
 * real path is the root or inside it. Every symlink is followed: on the way, at the end, and, for a file that
 * does not exist yet, through its nearest existing parent (and through a dangling symlink at its end), so
 * what a tool then opens or creates at the returned path stays inside the root. `..` is normalised first.
 *
 * Throws {@link WorkspaceEscapeError} for a path outside the root (checked before the other checks, so a
 * path outside gets that error whether or not it exists), and {@link ToolFailedError} for a missing target with
 * `mustExist`, a parent that is a file, a directory given to `forWrite`, a symlink loop.
 *
 * @example
 * ```ts
 * const file = await resolveInWorkspace(ctx.workspaceRoot, 'src/index.ts', { mustExist: true });
 * await resolveInWorkspace(root, '/etc/passwd'); // throws WorkspaceEscapeError
 * ```
 */
export async function resolveInWorkspace(root: string, path: string, options: ResolveOptions = {}): Promise<string> {
  if (path.includes('\0')) throw new ToolFailedError('invalid_path', 'the path contains a NUL byte', path);
  const realRoot = await realpath(root);
  const target = await realTarget(resolve(realRoot, path), path);
  if (!isInside(realRoot, target.real)) throw new WorkspaceEscapeError(path, realRoot, target.real);
  if (target.parentIsFile) {
    throw new ToolFailedError('not_a_directory', `"${path}": a parent of it is a file, not a directory`, path);
  }
  if (!target.exists && options.mustExist) {
    throw new ToolFailedError('not_found', `"${path}" does not exist in the workspace`, path);
  }
  if (options.forWrite && target.exists && (await stat(target.real)).isDirectory()) {
    throw new ToolFailedError('is_a_directory', `"${path}" is a directory; give the path of a file`, path);
  }
  return target.real;
}

/** `absolute` relative to `root`, with `/` separators; `.` for the root itself. For messages and data. */
export function workspaceRelative(root: string, absolute: string): string {
  const rel = relative(root, absolute);
  return rel === '' ? '.' : rel.split(sep).join('/');
}

/** Whether `candidate` is `root` or below it. Both must be normalised absolute paths. */
export function isInside(root: string, candidate: string): boolean {
  if (candidate === root) return true;
  return candidate.startsWith(root.endsWith(sep) ? root : root + sep);
}

interface RealTarget {
  /** The real path: fully resolved when it exists, else the real nearest existing ancestor plus the rest. */
  readonly real: string;
  readonly exists: boolean;
  /** The nearest existing ancestor of a missing target is not a directory. */
  readonly parentIsFile: boolean;
}

async function realTarget(candidate: string, given: string, hops = MAX_SYMLINK_HOPS): Promise<RealTarget> {
  const missing: string[] = [];
  let current = candidate;
  for (;;) {
    try {
      const real = await realpath(current);
      if (missing.length === 0) return { real, exists: true, parentIsFile: false };
      const parentIsFile = !(await stat(real)).isDirectory();
      return { real: join(real, ...missing.reverse()), exists: false, parentIsFile };
    } catch (error) {
      const code = errnoCode(error);
      if (code === 'ELOOP') {
        throw new ToolFailedError('invalid_path', `"${given}" goes through a symlink loop`, given, { cause: error });
      }
      if (code !== 'ENOENT' && code !== 'ENOTDIR') {
        throw new ToolFailedError('io', `cannot resolve "${given}": ${describeError(error)}`, given, { cause: error });
      }
    }
    // `current` does not resolve. A dangling symlink is followed to where it points, since creating the file
    // through it would create its target; anything else: remember the name and try the parent.
    const link = await lstat(current).catch(() => undefined);
    if (link?.isSymbolicLink()) {
      if (hops === 0) throw new ToolFailedError('invalid_path', `"${given}" goes through a symlink loop`, given);
      const base = await realpath(dirname(current));
      const pointsTo = resolve(base, await readlink(current));
      return realTarget(join(pointsTo, ...missing.reverse()), given, hops - 1);
    }
    const parent = dirname(current);
    if (parent === current) throw new ToolFailedError('not_found', `"${given}": no part of it exists`, given);
    missing.push(basename(current));
    current = parent;
  }
}

/** The `code` of a Node system error (`ENOENT`…), if it is one. */
export function errnoCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

/** A short description of a system error, without the stack. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
