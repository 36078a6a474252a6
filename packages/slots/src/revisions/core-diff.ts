import type { CoreFiles } from './core-snapshot.js';

/** Which files differ between two versions of a core. */
export interface CoreFileChanges {
  readonly added: readonly string[];
  readonly changed: readonly string[];
  readonly removed: readonly string[];
}

/** The files added, changed and removed going from `from` to `to`, each sorted. */
export function coreFileChanges(from: CoreFiles, to: CoreFiles): CoreFileChanges {
  const added: string[] = [];
  const changed: string[] = [];
  const removed: string[] = [];
  for (const [path, content] of to) {
    const before = from.get(path);
    if (!before) added.push(path);
    else if (!before.equals(content)) changed.push(path);
  }
  for (const path of from.keys()) if (!to.has(path)) removed.push(path);
  return { added: added.sort(), changed: changed.sort(), removed: removed.sort() };
}

/** Whether nothing changed. */
export const isUnchanged = (c: CoreFileChanges): boolean => c.added.length + c.changed.length + c.removed.length === 0;

/** One line for a person: `+1 ~1 -0: output/shout/module.ts, pipelines.yaml` (or `no changes`). */
export function summarizeChanges(c: CoreFileChanges): string {
  if (isUnchanged(c)) return 'no changes';
  const files = [...c.added, ...c.changed, ...c.removed].sort();
  const shown = files.length > 6 ? `${files.slice(0, 6).join(', ')}, …` : files.join(', ');
  return `+${c.added.length} ~${c.changed.length} -${c.removed.length}: ${shown}`;
}

/** Lines of a unified-style diff between two versions of a core (`--- a/path`, `+++ b/path`, `-`/`+` lines). */
export function unifiedDiff(from: CoreFiles, to: CoreFiles): string[] {
  const changes = coreFileChanges(from, to);
  const out: string[] = [];
  const paths = [...changes.added, ...changes.changed, ...changes.removed].sort();
  for (const path of paths) {
    const a = from.get(path);
    const b = to.get(path);
    out.push(`--- ${a ? `a/${path}` : '/dev/null'}`, `+++ ${b ? `b/${path}` : '/dev/null'}`);
    out.push(...lineDiff(linesOf(a), linesOf(b)));
  }
  return out;
}

function linesOf(content: Buffer | undefined): string[] {
  if (!content) return [];
  const text = content.toString('utf8');
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** The changed lines (with one line of context) by longest common subsequence; big files are replaced whole. */
function lineDiff(a: readonly string[], b: readonly string[]): string[] {
  if (a.length * b.length > 4_000_000) return [...a.map((l) => `-${l}`), ...b.map((l) => `+${l}`)];
  const n = a.length;
  const m = b.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const ops: string[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      ops.push(` ${a[i]}`);
      i++;
      j++;
    } else if (i < n && (j >= m || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) ops.push(`-${a[i++]}`);
    else ops.push(`+${b[j++]}`);
  }
  // Keep changed lines and one line of context around them.
  return ops.filter(
    (op, k) =>
      op[0] !== ' ' ||
      ops[k - 1]?.[0] === '+' ||
      ops[k - 1]?.[0] === '-' ||
      ops[k + 1]?.[0] === '+' ||
      ops[k + 1]?.[0] === '-',
  );
}
