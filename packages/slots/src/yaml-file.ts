import { readFile } from 'node:fs/promises';
import { type Document, isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import type { z } from 'zod';
import { knownKeysAt } from './core-schema.js';
import { CoreLoadError, type YamlPath } from './errors.js';

/** A parsed YAML file that can say on which line a value (or a key) is. */
export interface YamlFile {
  readonly file: string;
  readonly text: string;
  readonly value: unknown;
  /**
   * The 1-based line of the value at `path` (the nearest parent's when absent), or of `key` in the map there
   * (undefined when the key is not written).
   */
  lineOf(path: YamlPath, key?: string): number | undefined;
  /** A {@link CoreLoadError} for this file at `path`. */
  error(path: YamlPath, detail: string, key?: string): CoreLoadError;
}

/** Reads and parses a YAML file; a syntax error is a {@link CoreLoadError} at its line. */
export async function readYamlFile(file: string): Promise<YamlFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new CoreLoadError(file, `cannot read the file: ${(err as Error).message}`, undefined, [], { cause: err });
  }
  const lineCounter = new LineCounter();
  // logLevel error: a complex key becomes a string key (refused as unknown) without a Node warning on stderr.
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, logLevel: 'error' });
  const syntax = doc.errors[0];
  if (syntax) {
    const line = lineCounter.linePos(syntax.pos[0]).line;
    throw new CoreLoadError(file, `invalid YAML: ${syntax.message.split('\n')[0]}`, line, [], { cause: syntax });
  }
  let value: unknown;
  try {
    value = doc.toJS();
  } catch (err) {
    // The yaml library refuses to expand an alias bomb (a resource exhaustion attack) while converting.
    throw new CoreLoadError(file, `invalid YAML: ${(err as Error).message}`, undefined, [], { cause: err });
  }
  const lineOf = (path: YamlPath, key?: string) => lineIn(doc, lineCounter, path, key);
  return {
    file,
    text,
    value,
    lineOf,
    error: (path, detail, key) => new CoreLoadError(file, detail, lineOf(path, key), key ? [...path, key] : path),
  };
}

/**
 * Validates a parsed file with a strict zod schema. The first issue becomes a {@link CoreLoadError} naming
 * the file, the line and the YAML path; an unknown key is named with the keys that are allowed there.
 */
export function parseYamlFile<S extends z.ZodType>(yaml: YamlFile, schema: S, value = yaml.value): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0]!;
    const known = knownKeysAt(schema, path);
    const where = path.length === 0 ? '' : ` in ${path.join('.')}`;
    return yamlThrow(yaml, path, `unknown key "${key}"${where}; allowed: ${known.join(', ')}`, key);
  }
  const at = path.length === 0 ? 'the document' : path.join('.');
  if (issue.code === 'invalid_type' && valueAt(value, path) === undefined) {
    // zod says "expected string, received undefined": say the field is missing.
    return yamlThrow(yaml, path, `${at}: missing (a ${issue.expected} is required)`);
  }
  return yamlThrow(yaml, path, `${at}: ${issue.message}`);
}

/** The value at `path` of a parsed document (undefined where it has none). */
function valueAt(value: unknown, path: YamlPath): unknown {
  let node = value;
  for (const segment of path) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, segment)) return undefined;
    node = (node as Record<string | number, unknown>)[segment];
  }
  return node;
}

function yamlThrow(yaml: YamlFile, path: YamlPath, detail: string, key?: string): never {
  throw yaml.error(path, detail, key);
}

function lineIn(doc: Document, lines: LineCounter, path: YamlPath, key?: string): number | undefined {
  let node: unknown = doc.contents;
  let found = node as Node | null;
  for (const segment of path) {
    if (!(isMap(node) || isSeq(node))) break;
    const next: unknown = node.get(segment, true);
    if (next === undefined) break;
    node = next;
    found = next as Node;
  }
  if (key !== undefined && isMap(node)) {
    const pair = node.items.find((p) => isScalar(p.key) && p.key.value === key);
    if (pair && isScalar(pair.key) && pair.key.range) return lines.linePos(pair.key.range[0]).line;
    return undefined;
  }
  const offset = found?.range?.[0];
  return offset === undefined ? undefined : lines.linePos(offset).line;
}
