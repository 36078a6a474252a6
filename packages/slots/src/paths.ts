import { isAbsolute, relative, sep } from 'node:path';

/** Whether `candidate` is `root` or below it. Both must be normalised absolute paths. */
export function isInside(root: string, candidate: string): boolean {
  if (candidate === root) return true;
  return candidate.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** Whether the normalised absolute `target` leaves `root` (by `..` or by being elsewhere), looking at the text only. */
export function escapes(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel);
}
