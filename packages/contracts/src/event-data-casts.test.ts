import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The cast rule: event data is typed by the contracts (`DomainEvent`, `EventOfType`, `isEvent`,
 * `findEvent`), so outside `@demiurge/contracts` no source casts event data (`event.data as ...`,
 * `data as Record<string, unknown>`, `d.kind as string`). Checked in the packages that follow it;
 * a package joins the list once it is clean.
 */
const root = fileURLToPath(new URL('../../..', import.meta.url));
const CLEAN = [
  'packages/lifecycle/src',
  'packages/control-plane/src',
  'packages/sessions/src',
  'packages/delivery/src',
  'packages/scheduler/src',
  'packages/workers/src',
  'packages/slots/src',
  'packages/turn-engine/src',
  'services/host/src',
  'services/cli/src',
  ...readdirSync(join(root, 'packages/projectors')).map((name) => `packages/projectors/${name}/src`),
];
const CASTS = [/\bdata\s*\)?\s+as\s/, /\b(?:d|data)\.\w+\s+as\s/, /\bas Record<string, unknown>/];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules' || name === 'dist') return [];
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Code only: comments (which may say "event data as ...") are not casts. */
const code = (line: string): string =>
  line.trimStart().startsWith('*') || line.trimStart().startsWith('/*') ? '' : line.replace(/\/\/.*$/, '');

function castsIn(text: string): string[] {
  return text
    .split('\n')
    .map((line, i) => ({ line: code(line), n: i + 1 }))
    .filter(({ line }) => CASTS.some((re) => re.test(line)))
    .map(({ line, n }) => `${n}: ${line.trim()}`);
}

describe('the cast rule: no casts of event data outside contracts', () => {
  it('recognises the casts it forbids, and not comments or payload reads', () => {
    expect(castsIn('const d = event.data as Record<string, unknown>;')).toHaveLength(1);
    expect(castsIn('const x = (first.data as EventData<typeof DeliveryQueued>);')).toHaveLength(1);
    expect(castsIn('  kind = d.kind as string;')).toHaveLength(1);
    expect(castsIn(' * A time from event data as `Date#toISOString()`')).toEqual([]);
    expect(castsIn('const e = asDomainEvent(recorded); e.data.kind;')).toEqual([]);
  });

  it('holds in every package that follows it', () => {
    const found = CLEAN.flatMap((dir) =>
      sources(join(root, dir)).flatMap((file) =>
        castsIn(readFileSync(file, 'utf8')).map((hit) => `${relative(root, file)}:${hit}`),
      ),
    );
    expect(found).toEqual([]);
  });
});
