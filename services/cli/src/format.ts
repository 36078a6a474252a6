/** A column of a text table: its heading and how to show a row's cell. */
export interface Column<T> {
  readonly heading: string;
  readonly cell: (row: T) => string;
}

/** Rows as left-aligned columns under upper-case headings, two spaces apart; the last column is not padded. */
export function table<T>(rows: readonly T[], columns: readonly Column<T>[], indent = ''): string[] {
  const cells = rows.map((row) => columns.map((c) => oneLine(c.cell(row))));
  const widths = columns.map((c, i) => Math.max(c.heading.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: readonly string[]) =>
    `${indent}${values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!))).join('  ')}`.trimEnd();
  return [line(columns.map((c) => c.heading.toUpperCase())), ...cells.map(line)];
}

/** Newlines and tabs as spaces, so a cell stays on its line. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ');
}

/** Text cut to `max` characters with an ellipsis. */
export function shorten(text: string, max: number): string {
  const flat = oneLine(text);
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** A value as compact JSON, cut to `max` characters. */
export function shortJson(value: unknown, max = 100): string {
  return shorten(JSON.stringify(value) ?? 'undefined', max);
}

/** `in 25s`, `3m ago`: how far an ISO time is from `now`. */
export function relativeTime(iso: string, now: number): string {
  const ms = Date.parse(iso) - now;
  const abs = Math.abs(ms);
  const unit =
    abs < 60_000
      ? `${Math.round(abs / 1000)}s`
      : abs < 3_600_000
        ? `${Math.round(abs / 60_000)}m`
        : abs < 86_400_000
          ? `${Math.round(abs / 3_600_000)}h`
          : `${Math.round(abs / 86_400_000)}d`;
  return ms >= 0 ? `in ${unit}` : `${unit} ago`;
}

/** A lease as the operator reads it: `until <time> (in 25s)`, `expired 3m ago`, `none`. */
export function describeLease(leaseUntil: string | null, now: number): string {
  if (!leaseUntil) return 'none';
  return Date.parse(leaseUntil) > now
    ? `until ${leaseUntil} (${relativeTime(leaseUntil, now)})`
    : `expired ${relativeTime(leaseUntil, now)}`;
}

/** `a 1, b 2` from a record of counts, in key order; `none` when empty. */
export function counts(record: Readonly<Record<string, number>>): string {
  const entries = Object.entries(record).sort(([a], [b]) => a.localeCompare(b));
  return entries.length === 0 ? 'none' : entries.map(([k, n]) => `${k} ${n}`).join(', ');
}

/** `-` for a missing value. */
export function orDash(value: string | number | null | undefined): string {
  return value === null || value === undefined || value === '' ? '-' : String(value);
}
