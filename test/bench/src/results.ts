import { writeFileSync } from 'node:fs';

/**
 * One figure of `bench-results.json`. `baseline` is the raw figure measured in the same run,
 * `ratio` is value ÷ baseline, and `met` says whether the ratio reached `target`: at least the
 * target for throughputs, at most the target for rows whose name says "(ratio <= target)".
 */
export interface BenchResult {
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  readonly baseline?: number;
  readonly ratio?: number;
  readonly target?: number;
  readonly met?: boolean;
}

/** Which way a ratio must go to meet its target. */
export type Goal = 'at least' | 'at most';

/** A figure compared with its raw baseline: `ratio = value / baseline`. */
export function compared(
  name: string,
  unit: string,
  value: number,
  baseline: number,
  target: number,
  goal: Goal = 'at least',
): BenchResult {
  const ratio = value / baseline;
  const rounding = unit === 'MiB' ? 10 : 1;
  return {
    name: goal === 'at most' ? `${name} (ratio <= target)` : name,
    value: Math.round(value * rounding) / rounding,
    unit,
    baseline: Math.round(baseline * rounding) / rounding,
    ratio: Math.round(ratio * 1000) / 1000,
    target,
    met: goal === 'at most' ? ratio <= target : ratio >= target,
  };
}

/** A figure with its same-run baseline and ratio but no target: measured for reading other rows, met by nothing. */
export function reference(name: string, unit: string, value: number, baseline: number): BenchResult {
  const { target: _target, met: _met, ...row } = compared(name, unit, value, baseline, 1);
  return row;
}

export function writeResults(path: string, results: readonly BenchResult[]): void {
  writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`);
}

/** The results as an aligned text table. */
export function formatTable(results: readonly BenchResult[]): string {
  const header = ['name', 'value', 'unit', 'baseline', 'ratio', 'target', 'met'];
  const rows = results.map((r) => [
    r.name,
    formatNumber(r.value),
    r.unit,
    r.baseline === undefined ? '' : formatNumber(r.baseline),
    r.ratio === undefined ? '' : r.ratio.toFixed(3),
    r.target === undefined ? '' : `${r.name.endsWith('(ratio <= target)') ? '<=' : '>='} ${r.target}`,
    r.met === undefined ? '' : r.met ? 'yes' : 'NO',
  ]);
  return alignedTable(header, rows, [0, 2]);
}

/** Rows of cells as a text table: each column as wide as its widest cell, right-aligned but the `left` ones. */
export function alignedTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  left: readonly number[] = [],
): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (left.includes(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function formatNumber(n: number): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: 1 });
}
