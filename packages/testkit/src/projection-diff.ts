import { isDeepStrictEqual } from 'node:util';

/** A projection as `ProjectionReader.dump()` returns it: collection → id → document. */
export type ProjectionDump = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

/** One document that differs between the live projection and a fresh rebuild. */
export interface ProjectionDifference {
  readonly projector: string;
  readonly collection: string;
  readonly id: string;
  /** `missing`: only the rebuild has it; `extra`: only the live projection has it; `changed`: both, unequal. */
  readonly kind: 'missing' | 'extra' | 'changed';
  /** For `changed`: the paths that differ (`status`, `lease.until`, `turnIds[2]`), at most 10. */
  readonly fields: readonly FieldDifference[];
  readonly live: unknown;
  readonly rebuilt: unknown;
}

export interface FieldDifference {
  readonly path: string;
  readonly live: unknown;
  readonly rebuilt: unknown;
}

const MAX_FIELDS = 10;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The leaf paths where two JSON values differ, depth first, at most `max`. */
export function diffValues(live: unknown, rebuilt: unknown, path = '', out: FieldDifference[] = []): FieldDifference[] {
  if (out.length >= MAX_FIELDS || isDeepStrictEqual(live, rebuilt)) return out;
  if (isRecord(live) && isRecord(rebuilt)) {
    const keys = [...new Set([...Object.keys(live), ...Object.keys(rebuilt)])].sort();
    for (const key of keys) diffValues(live[key], rebuilt[key], path ? `${path}.${key}` : key, out);
    return out;
  }
  if (Array.isArray(live) && Array.isArray(rebuilt) && live.length === rebuilt.length) {
    for (const [i, item] of live.entries()) diffValues(item, rebuilt[i], `${path}[${i}]`, out);
    return out;
  }
  out.push({ path: path || '(document)', live, rebuilt });
  return out;
}

/**
 * Every document that differs between a live projection and its rebuild from the log, in collection then
 * id order. Documents compare as JSON values (key order does not matter).
 */
export function diffProjection(
  projector: string,
  live: ProjectionDump,
  rebuilt: ProjectionDump,
): ProjectionDifference[] {
  const out: ProjectionDifference[] = [];
  const collections = [...new Set([...Object.keys(live), ...Object.keys(rebuilt)])].sort();
  for (const collection of collections) {
    const a = live[collection] ?? {};
    const b = rebuilt[collection] ?? {};
    const ids = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const id of ids) {
      const inLive = Object.hasOwn(a, id);
      const inRebuilt = Object.hasOwn(b, id);
      if (inLive && inRebuilt && isDeepStrictEqual(a[id], b[id])) continue;
      out.push({
        projector,
        collection,
        id,
        kind: !inLive ? 'missing' : !inRebuilt ? 'extra' : 'changed',
        fields: inLive && inRebuilt ? diffValues(a[id], b[id]) : [],
        live: inLive ? a[id] : null,
        rebuilt: inRebuilt ? b[id] : null,
      });
    }
  }
  return out;
}

/** One line per difference: where, and what differs. */
export function describeDifference(d: ProjectionDifference): string {
  const where = `${d.projector} ${d.collection}/${d.id}`;
  if (d.kind === 'missing') return `${where}: missing from the live projection (a rebuild has ${json(d.rebuilt)})`;
  if (d.kind === 'extra') return `${where}: in the live projection only (${json(d.live)}); a rebuild has none`;
  const fields = d.fields.map((f) => `${f.path}: live ${json(f.live)}, rebuilt ${json(f.rebuilt)}`).join('; ');
  return `${where}: differs from a rebuild: ${fields}`;
}

function json(value: unknown): string {
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}
