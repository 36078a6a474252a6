import { mkdir, open, readdir, readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { defineTool } from '../tool.js';
import { writeFileAtomic } from './atomic-write.js';
import { ToolFailedError, throwIfCancelled } from './errors.js';
import { describeError, errnoCode, resolveInWorkspace, workspaceRelative } from './workspace-path.js';

/** `read_file` returns at most this many bytes of a file (64 KiB). */
export const READ_FILE_MAX_BYTES = 64 * 1024;
/** `list_dir` shows at most this many entries. */
export const LIST_DIR_MAX_ENTRIES = 1000;

const WorkspacePath = z.string().min(1).describe('A path relative to the workspace root (or absolute inside it).');

export const ReadFileInput = z.object({ path: WorkspacePath });
export type ReadFileInput = z.infer<typeof ReadFileInput>;

/**
 * `read_file { path }`: the text of a file in the workspace, at most {@link READ_FILE_MAX_BYTES} (cut at a
 * line end where possible, with a note saying how much is left). A file with NUL bytes is refused as binary.
 *
 * @example
 * ```ts
 * const { output } = await readFileTool.run({ path: 'README.md' }, ctx);
 * ```
 */
export const readFileTool = defineTool<ReadFileInput>({
  name: 'read_file',
  description:
    `Read a text file in the workspace. Returns at most ${READ_FILE_MAX_BYTES / 1024} KiB; a longer file is ` +
    'cut with a note (use shell with head/tail to read further). Binary files are refused.',
  input: ReadFileInput,
  effect: 'read',
  idempotent: true,
  async run(input, ctx) {
    throwIfCancelled(ctx.signal, 'read_file');
    const file = await resolveInWorkspace(ctx.workspaceRoot, input.path, { mustExist: true });
    const info = await stat(file);
    if (info.isDirectory()) {
      throw new ToolFailedError('is_a_directory', `"${input.path}" is a directory; use list_dir`, input.path);
    }
    if (!info.isFile()) throw new ToolFailedError('not_a_file', `"${input.path}" is not a regular file`, input.path);
    const head = await readHead(file, READ_FILE_MAX_BYTES);
    if (head.includes(0)) {
      throw new ToolFailedError(
        'binary_file',
        `"${input.path}" is a binary file (it contains NUL bytes); read_file only returns text`,
        input.path,
      );
    }
    const path = workspaceRelative(ctx.workspaceRoot, file);
    const truncated = info.size > head.length;
    if (!truncated) {
      return { output: head.length === 0 ? '(empty file)' : head.toString('utf8'), data: { path, bytes: info.size } };
    }
    const shown = head.subarray(0, cutPoint(head));
    const note =
      `[truncated: showing the first ${shown.length} of ${info.size} bytes of ${path}; ` +
      `use shell (e.g. tail -c +${shown.length + 1} ${shellWord(path)} | head -c ${READ_FILE_MAX_BYTES}) to read the rest]`;
    return { output: `${shown.toString('utf8')}\n${note}`, data: { path, bytes: info.size, truncated: true } };
  },
});

export const ListDirInput = z.object({
  path: WorkspacePath.optional().describe('A directory relative to the workspace root; the root when omitted.'),
});
export type ListDirInput = z.infer<typeof ListDirInput>;

/**
 * `list_dir { path }`: the entries of a directory, sorted, one a line; directories end in `/`, symlinks in
 * `@`. At most {@link LIST_DIR_MAX_ENTRIES}, then a note with the total.
 *
 * @example
 * ```ts
 * (await listDirTool.run({ path: 'src' }, ctx)).output; // "a.ts\nlib/\n"
 * ```
 */
export const listDirTool = defineTool<ListDirInput>({
  name: 'list_dir',
  description:
    'List a directory in the workspace (the root when path is omitted): entries sorted by name, directories ' +
    `ending in "/", symlinks in "@". At most ${LIST_DIR_MAX_ENTRIES} entries.`,
  input: ListDirInput,
  effect: 'read',
  idempotent: true,
  async run(input, ctx) {
    throwIfCancelled(ctx.signal, 'list_dir');
    const given = input.path ?? '.';
    const dir = await resolveInWorkspace(ctx.workspaceRoot, given, { mustExist: true });
    if (!(await stat(dir)).isDirectory()) {
      throw new ToolFailedError('not_a_directory', `"${given}" is not a directory; use read_file`, given);
    }
    const entries = (await readdir(dir, { withFileTypes: true }))
      .map((e) => (e.isDirectory() ? `${e.name}/` : e.isSymbolicLink() ? `${e.name}@` : e.name))
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const path = workspaceRelative(ctx.workspaceRoot, dir);
    if (entries.length === 0) return { output: '(empty directory)', data: { path, entries: 0 } };
    const shown = entries.slice(0, LIST_DIR_MAX_ENTRIES);
    const note =
      entries.length > shown.length
        ? `\n[truncated: showing ${shown.length} of ${entries.length} entries; use shell (find, ls) to narrow down]`
        : '';
    return {
      output: shown.join('\n') + note,
      data: { path, entries: entries.length, ...(note === '' ? {} : { truncated: true }) },
    };
  },
});

export const WriteFileInput = z.object({
  path: WorkspacePath,
  content: z.string().describe('The whole new content of the file.'),
});
export type WriteFileInput = z.infer<typeof WriteFileInput>;

/**
 * `write_file { path, content }`: creates or replaces a file (and its missing parent directories, inside the
 * root), atomically. Idempotent: writing the same content twice leaves the same file.
 *
 * @example
 * ```ts
 * await writeFileTool.run({ path: 'notes/todo.md', content: '- ship\n' }, ctx);
 * ```
 */
export const writeFileTool = defineTool<WriteFileInput>({
  name: 'write_file',
  description:
    'Create or overwrite a file in the workspace with the given content (parent directories are created). ' +
    'To change part of an existing file, prefer edit_file.',
  input: WriteFileInput,
  effect: 'write.file',
  idempotent: true,
  async run(input, ctx) {
    throwIfCancelled(ctx.signal, 'write_file');
    const file = await resolveInWorkspace(ctx.workspaceRoot, input.path, { forWrite: true });
    const created = !(await exists(file));
    await mkdir(dirname(file), { recursive: true });
    await writeOrFail(file, input.content, input.path);
    const path = workspaceRelative(ctx.workspaceRoot, file);
    const bytes = Buffer.byteLength(input.content, 'utf8');
    return { output: `${created ? 'created' : 'overwrote'} ${path} (${bytes} bytes)`, data: { path, bytes, created } };
  },
});

export const EditFileInput = z.object({
  path: WorkspacePath,
  old_text: z.string().min(1).describe('Text to replace; it must occur exactly once in the file, whitespace included.'),
  new_text: z.string().describe('The replacement text.'),
});
export type EditFileInput = z.infer<typeof EditFileInput>;

/**
 * `edit_file { path, old_text, new_text }`: replaces the one occurrence of `old_text`. Zero or several
 * occurrences fail with a message giving the count. Not idempotent: a second run finds nothing to replace
 * (or replaces again, when `new_text` contains `old_text`).
 *
 * @example
 * ```ts
 * await editFileTool.run({ path: 'a.ts', old_text: 'let x = 1;', new_text: 'const x = 1;' }, ctx);
 * ```
 */
export const editFileTool = defineTool<EditFileInput>({
  name: 'edit_file',
  description:
    'Replace text in an existing file: old_text must occur exactly once (include enough surrounding lines to ' +
    'make it unique, with exact whitespace); it is replaced by new_text.',
  input: EditFileInput,
  effect: 'write.file',
  idempotent: false,
  async run(input, ctx) {
    throwIfCancelled(ctx.signal, 'edit_file');
    const file = await resolveInWorkspace(ctx.workspaceRoot, input.path, { mustExist: true, forWrite: true });
    const raw = await readFile(file);
    if (raw.includes(0)) {
      throw new ToolFailedError(
        'binary_file',
        `"${input.path}" is a binary file; edit_file only edits text`,
        input.path,
      );
    }
    const text = raw.toString('utf8');
    const count = occurrences(text, input.old_text);
    if (count === 0) {
      throw new ToolFailedError(
        'no_match',
        `old_text was not found in "${input.path}" (0 occurrences); it must match the file exactly, ` +
          'including whitespace and indentation: read the file again and copy the text',
        input.path,
      );
    }
    if (count > 1) {
      throw new ToolFailedError(
        'ambiguous_match',
        `old_text occurs ${count} times in "${input.path}"; it must occur exactly once: include more surrounding ` +
          'lines to make it unique',
        input.path,
      );
    }
    const at = text.indexOf(input.old_text);
    // Slices, not String.replace: `$&` and friends in new_text stay literal.
    const edited = text.slice(0, at) + input.new_text + text.slice(at + input.old_text.length);
    await writeOrFail(file, edited, input.path);
    const path = workspaceRelative(ctx.workspaceRoot, file);
    const line = lineOf(text, at);
    return { output: `edited ${path}: replaced 1 occurrence at line ${line}`, data: { path, line } };
  },
});

/** Counts occurrences of `needle`, overlapping ones included (`aa` occurs twice in `aaa`: both would match). */
function occurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) count += 1;
  return count;
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let at = text.indexOf('\n'); at !== -1 && at < index; at = text.indexOf('\n', at + 1)) line += 1;
  return line;
}

/** Reads at most `max` bytes from the start of `file`. */
async function readHead(file: string, max: number): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(max);
    let filled = 0;
    while (filled < max) {
      const { bytesRead } = await handle.read(buffer, filled, max - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

/**
 * Where to cut a truncated read: after the last line end in the final quarter, else at the last whole UTF-8
 * character, so the text never ends in half a character.
 */
function cutPoint(head: Buffer): number {
  const lastNewline = head.lastIndexOf(0x0a);
  if (lastNewline >= head.length * 0.75) return lastNewline + 1;
  let end = head.length;
  // Step back over continuation bytes (10xxxxxx) and the lead byte of a character they do not complete.
  let back = 0;
  while (back < 3 && end - back - 1 >= 0 && ((head[end - back - 1] ?? 0) & 0xc0) === 0x80) back += 1;
  const lead = head[end - back - 1] ?? 0;
  const width = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  if (width > back + 1) end -= back + 1;
  return end;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function writeOrFail(file: string, content: string, given: string): Promise<void> {
  try {
    await writeFileAtomic(file, content);
  } catch (error) {
    const reason = errnoCode(error) === 'ENOTDIR' ? 'not_a_directory' : 'io';
    throw new ToolFailedError(reason, `cannot write "${given}": ${describeError(error)}`, given, { cause: error });
  }
}

/** `path` as one shell word. */
function shellWord(path: string): string {
  return /^[\w./@%+=:,-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
}
