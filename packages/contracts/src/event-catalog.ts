import { z } from 'zod';
import type { EventRegistry } from './registry.js';

type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  pattern?: string;
};

function describeType(s: JsonSchema): string {
  if (s.$ref) return 'json';
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' \\| ');
  if (s.anyOf) return s.anyOf.map(describeType).join(' \\| ');
  if (s.type === 'array') return `${s.items ? describeType(s.items) : 'unknown'}[]`;
  if (s.type === 'object' && s.properties) {
    return `{ ${Object.entries(s.properties)
      .map(([k, v]) => `${k}${s.required?.includes(k) ? '' : '?'}: ${describeType(v)}`)
      .join(', ')} }`;
  }
  const match = s.pattern?.match(/^\^([a-z]+)_/);
  if (match) return `${match[1]}_ id`;
  return Array.isArray(s.type) ? s.type.join(' \\| ') : (s.type ?? 'unknown');
}

/**
 * The event catalog as Markdown, generated from the registry's zod schemas (`docs/events.md`).
 * A test fails when the committed file is stale; `pnpm docs:generate` regenerates it.
 */
export function renderEventCatalog(registry: EventRegistry): string {
  const lines = [
    '# Event catalog',
    '',
    '<!-- Generated from the zod schemas in @demiurge/contracts by `pnpm docs:generate`. Do not edit by hand. -->',
    '',
    'Every event type the runtime records, its current schema version and the fields of its `data`',
    '(`?` marks an optional field). Data recorded under an older schema version is upcast on read.',
    '',
  ];
  const groups = new Map<string, typeof registry.definitions>();
  for (const def of registry.definitions) {
    const group = def.type.split('.')[0]!;
    groups.set(group, [...(groups.get(group) ?? []), def]);
  }
  for (const [group, defs] of groups) {
    lines.push(`## ${group}`, '', '| type | version | description | data |', '| --- | --- | --- | --- |');
    for (const def of defs) {
      const schema = z.toJSONSchema(def.data, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
      lines.push(`| \`${def.type}\` | ${def.schemaVersion} | ${def.description} | \`${describeType(schema)}\` |`);
    }
    lines.push('');
  }
  return lines.join('\n');
}
