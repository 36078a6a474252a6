import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isMap, isScalar, LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { ScheduleFileError } from './errors.js';
import { type Schedule, ScheduleFile, scheduleIdProblem, toSchedule } from './schedule-file.js';

/** What {@link loadSchedules} found: the valid schedules (by id) and one error per unusable file. */
export interface LoadedSchedules {
  readonly schedules: readonly Schedule[];
  readonly errors: readonly ScheduleFileError[];
}

/** The directory of an Agent Core that holds its schedule files. */
export const SCHEDULES_DIR = 'schedules';

/**
 * Reads `<coreDir>/schedules/*.yaml`. Each file is parsed with `yaml` and validated strictly; a bad file
 * becomes a {@link ScheduleFileError} naming the file, the field and (where known) the line, and does
 * not stop the others. A missing `schedules/` directory is no schedules. Other file names are ignored.
 *
 * @example
 * const { schedules, errors } = await loadSchedules('/home/me/.demiurge/cores/default');
 */
export async function loadSchedules(coreDir: string): Promise<LoadedSchedules> {
  let names: string[];
  try {
    names = (await readdir(join(coreDir, SCHEDULES_DIR), { withFileTypes: true }))
      .filter((entry) => entry.isFile() && entry.name.endsWith('.yaml') && !entry.name.startsWith('.'))
      .map((entry) => entry.name)
      .sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { schedules: [], errors: [] };
    throw err;
  }
  const schedules: Schedule[] = [];
  const errors: ScheduleFileError[] = [];
  for (const name of names) {
    const file = `${SCHEDULES_DIR}/${name}`;
    const id = name.slice(0, -'.yaml'.length);
    let text: string;
    try {
      text = await readFile(join(coreDir, file), 'utf8');
    } catch (err) {
      errors.push(new ScheduleFileError(file, id, null, null, `cannot be read: ${(err as Error).message}`));
      continue;
    }
    const result = parseScheduleFile(id, file, text);
    if (result instanceof ScheduleFileError) errors.push(result);
    else schedules.push(result);
  }
  return { schedules, errors };
}

/**
 * Parses one schedule file's text: the schedule, or the first problem as a {@link ScheduleFileError}.
 *
 * @example
 * parseScheduleFile('daily', 'schedules/daily.yaml', 'cron: "0 9 * * *"\nprompt: Good morning\n');
 */
export function parseScheduleFile(id: string, file: string, text: string): Schedule | ScheduleFileError {
  const idProblem = scheduleIdProblem(id);
  if (idProblem) return new ScheduleFileError(file, id, null, null, idProblem);
  const lines = new LineCounter();
  // logLevel error: a complex key becomes a string key (refused as unknown) without a Node warning on stderr.
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true, logLevel: 'error' });
  const yamlError = doc.errors[0];
  if (yamlError) {
    const line = lines.linePos(yamlError.pos[0]).line;
    return new ScheduleFileError(file, id, null, line, `invalid YAML: ${yamlError.message.split('\n')[0]}`);
  }
  let value: unknown;
  try {
    value = doc.toJS() ?? {};
  } catch (err) {
    // The yaml library refuses to expand an alias bomb (a resource exhaustion attack) while converting.
    return new ScheduleFileError(file, id, null, null, `invalid YAML: ${(err as Error).message}`);
  }
  const parsed = ScheduleFile.safeParse(value);
  if (parsed.success) return toSchedule(id, file, parsed.data);
  const issue = parsed.error.issues[0]!;
  let path: PropertyKey[] = [...issue.path];
  if (issue.code === 'unrecognized_keys') path = [...path, issue.keys[0]!];
  const field = path.length === 0 ? null : path.map(String).join('.');
  const detail =
    issue.code === 'unrecognized_keys'
      ? `unknown field (${knownFields()})`
      : issue.code === 'invalid_type' && valueAt(value, path) === undefined
        ? `missing (a ${issue.expected} is required)`
        : issue.message;
  return new ScheduleFileError(file, id, field, lineOf(doc, lines, path, issue), detail);
}

/** The value at `path` of the parsed file (undefined where it has none). */
function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let node = value;
  for (const segment of path) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, segment)) return undefined;
    node = (node as Record<PropertyKey, unknown>)[segment];
  }
  return node;
}

function knownFields(): string {
  return `known: ${Object.keys(ScheduleFile.shape).join(', ')}`;
}

/** The line of the value at `path` (or, for an unknown key, of the key itself). */
function lineOf(
  doc: ReturnType<typeof parseDocument>,
  lines: LineCounter,
  path: readonly PropertyKey[],
  issue: z.core.$ZodIssue,
): number | null {
  if (path.length === 0) return null;
  const parentPath = path.slice(0, -1) as (string | number)[];
  const parent = parentPath.length === 0 ? doc.contents : doc.getIn(parentPath, true);
  if (!isMap(parent)) return null;
  const pair = parent.items.find((item) => isScalar(item.key) && item.key.value === path[path.length - 1]);
  if (!pair) return null;
  const node = issue.code === 'unrecognized_keys' || !pair.value ? pair.key : pair.value;
  const offset = (node as { range?: [number, number, number] | null }).range?.[0];
  return offset === undefined ? null : lines.linePos(offset).line;
}
