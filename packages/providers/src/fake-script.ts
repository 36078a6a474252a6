import { readFile } from 'node:fs/promises';
import { type Document, isNode, LineCounter, parseDocument } from 'yaml';
import { FakeScriptError } from './errors.js';
import { FakeScript, type FakeStep } from './fake.js';

/**
 * Reads a fake script (YAML, or JSON: YAML accepts it) and validates it. A missing file, a syntax error or a
 * step that does not match the format throws {@link FakeScriptError} naming the file, the field and the line.
 *
 * @example
 * ```ts
 * const provider = createFakeProvider({ script: await loadFakeScript('fixtures/greet.yaml') });
 * ```
 */
export async function loadFakeScript(path: string): Promise<FakeStep[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    throw new FakeScriptError(path, [], `cannot read the file (${errorText(cause)})`, undefined, { cause });
  }
  return parseFakeScript(text, path);
}

/** Parses and validates the text of a fake script; `source` names it in errors. Pure (no IO). */
export function parseFakeScript(text: string, source: string): FakeStep[] {
  const lineCounter = new LineCounter();
  // logLevel error: a complex key becomes a string key without a Node warning on stderr.
  const doc = parseDocument(text, { lineCounter, logLevel: 'error' });
  const syntax = doc.errors[0];
  if (syntax !== undefined) {
    const line = syntax.linePos?.[0].line;
    // The pretty message is `<what> at line L, column C:` then a code frame; the line goes in the error's own field.
    const what = (syntax.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
    throw new FakeScriptError(source, [], `not valid YAML or JSON: ${what}`, line);
  }
  let value: unknown;
  try {
    value = doc.toJS();
  } catch (err) {
    // The yaml library refuses to expand an alias bomb (a resource exhaustion attack) while converting.
    throw new FakeScriptError(source, [], `not valid YAML or JSON: ${errorText(err)}`, undefined, { cause: err });
  }
  const result = FakeScript.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue?.path ?? [];
  const detail = value === null || value === undefined ? 'the file is empty; expected a list of steps' : issue?.message;
  throw new FakeScriptError(source, path, detail ?? 'invalid', lineOf(doc, lineCounter, path));
}

/** The line of the node at `path`, or of its nearest ancestor that exists (for a missing field). */
function lineOf(doc: Document, lineCounter: LineCounter, path: readonly PropertyKey[]): number | undefined {
  for (let depth = path.length; depth >= 0; depth--) {
    const node = depth === 0 ? doc.contents : doc.getIn(path.slice(0, depth), true);
    if (isNode(node) && node.range) return lineCounter.linePos(node.range[0]).line;
  }
  return undefined;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
