import { chmod, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempWorkspace, type TempWorkspace } from '../../test-fixtures/workspace.js';
import { ToolCancelledError, ToolFailedError, WorkspaceEscapeError } from './errors.js';
import {
  EditFileInput,
  editFileTool,
  LIST_DIR_MAX_ENTRIES,
  listDirTool,
  READ_FILE_MAX_BYTES,
  readFileTool,
  writeFileTool,
} from './files.js';

let ws: TempWorkspace;
beforeEach(async () => {
  ws = await makeTempWorkspace();
  await writeFile(join(ws.outside, 'secret.txt'), 'secret');
});
afterEach(() => ws.cleanup());

const put = async (path: string, content: string | Buffer): Promise<void> => {
  await mkdir(join(ws.root, path, '..'), { recursive: true });
  await writeFile(join(ws.root, path), content);
};
const read = (path: string): Promise<string> => readFile(join(ws.root, path), 'utf8');

describe('read_file', () => {
  it('returns the text of a small file, and says so for an empty one', async () => {
    await put('src/a.ts', 'export const a = 1;\n');
    await put('empty.txt', '');
    expect(await readFileTool.run({ path: 'src/a.ts' }, ws.ctx())).toEqual({
      output: 'export const a = 1;\n',
      data: { path: 'src/a.ts', bytes: 20 },
    });
    expect((await readFileTool.run({ path: 'empty.txt' }, ws.ctx())).output).toBe('(empty file)');
  });

  it('caps a large file at 64 KiB, cut at a line end, with a note saying how much is left', async () => {
    const line = `${'x'.repeat(99)}\n`;
    await put('big.txt', line.repeat(2000)); // 200 000 bytes
    const { output, data } = await readFileTool.run({ path: 'big.txt' }, ws.ctx());
    const [text, note] = [output.slice(0, output.lastIndexOf('\n[')), output.slice(output.lastIndexOf('\n[') + 1)];
    expect(text.length).toBeLessThanOrEqual(READ_FILE_MAX_BYTES);
    expect(text.length).toBe(655 * 100);
    expect(text.endsWith(line)).toBe(true);
    expect(note).toMatch(/^\[truncated: showing the first 65500 of 200000 bytes of big\.txt; use shell/);
    expect(data).toEqual({ path: 'big.txt', bytes: 200_000, truncated: true });
  });

  it('never cuts a long line in the middle of a UTF-8 character', async () => {
    // 'a' then 2-byte characters and no line end: byte 65 536 is the first half of an 'é'.
    await put('wide.txt', `a${'é'.repeat(READ_FILE_MAX_BYTES)}`);
    const { output } = await readFileTool.run({ path: 'wide.txt' }, ws.ctx());
    const text = output.slice(0, output.lastIndexOf('\n['));
    expect(text).toBe(`a${'é'.repeat(READ_FILE_MAX_BYTES / 2 - 1)}`);
    expect(text).not.toContain('\uFFFD');
  });

  it('refuses binary files, directories, missing files and escapes clearly', async () => {
    await put('image.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]));
    await mkdir(join(ws.root, 'dir'));
    await symlink(join(ws.outside, 'secret.txt'), join(ws.root, 'secret-link'));
    await expect(readFileTool.run({ path: 'image.png' }, ws.ctx())).rejects.toMatchObject({
      reason: 'binary_file',
      message: '"image.png" is a binary file (it contains NUL bytes); read_file only returns text',
    });
    await expect(readFileTool.run({ path: 'dir' }, ws.ctx())).rejects.toMatchObject({
      reason: 'is_a_directory',
      message: '"dir" is a directory; use list_dir',
    });
    await expect(readFileTool.run({ path: 'missing.txt' }, ws.ctx())).rejects.toMatchObject({ reason: 'not_found' });
    await expect(readFileTool.run({ path: '../outside/secret.txt' }, ws.ctx())).rejects.toBeInstanceOf(
      WorkspaceEscapeError,
    );
    await expect(readFileTool.run({ path: 'secret-link' }, ws.ctx())).rejects.toBeInstanceOf(WorkspaceEscapeError);
  });

  it('throws ToolCancelledError when the signal is already aborted', async () => {
    await put('a.txt', 'a');
    const controller = new AbortController();
    controller.abort();
    await expect(readFileTool.run({ path: 'a.txt' }, ws.ctx(controller.signal))).rejects.toBeInstanceOf(
      ToolCancelledError,
    );
  });
});

describe('list_dir', () => {
  it('lists entries sorted, directories with "/", symlinks with "@"; the root by default', async () => {
    await put('b.txt', '');
    await put('a.txt', '');
    await put('src/index.ts', '');
    await put('.hidden', '');
    await symlink('a.txt', join(ws.root, 'link'));
    expect(await listDirTool.run({}, ws.ctx())).toEqual({
      output: '.hidden\na.txt\nb.txt\nlink@\nsrc/',
      data: { path: '.', entries: 5 },
    });
    expect((await listDirTool.run({ path: 'src' }, ws.ctx())).output).toBe('index.ts');
  });

  it('says so for an empty directory and bounds a huge one', async () => {
    await mkdir(join(ws.root, 'empty'));
    expect((await listDirTool.run({ path: 'empty' }, ws.ctx())).output).toBe('(empty directory)');
    await mkdir(join(ws.root, 'many'));
    const total = LIST_DIR_MAX_ENTRIES + 5;
    await Promise.all(
      Array.from({ length: total }, (_, i) => writeFile(join(ws.root, 'many', `f${String(i).padStart(4, '0')}`), '')),
    );
    const { output, data } = await listDirTool.run({ path: 'many' }, ws.ctx());
    const lines = output.split('\n');
    expect(lines).toHaveLength(LIST_DIR_MAX_ENTRIES + 1);
    expect(lines[0]).toBe('f0000');
    expect(lines.at(-1)).toBe(
      `[truncated: showing ${LIST_DIR_MAX_ENTRIES} of ${total} entries; use shell (find, ls) to narrow down]`,
    );
    expect(data).toEqual({ path: 'many', entries: total, truncated: true });
  });

  it('refuses files, missing directories and escapes', async () => {
    await put('a.txt', '');
    await symlink(ws.outside, join(ws.root, 'out'));
    await expect(listDirTool.run({ path: 'a.txt' }, ws.ctx())).rejects.toMatchObject({
      reason: 'not_a_directory',
      message: '"a.txt" is not a directory; use read_file',
    });
    await expect(listDirTool.run({ path: 'nope' }, ws.ctx())).rejects.toMatchObject({ reason: 'not_found' });
    await expect(listDirTool.run({ path: '..' }, ws.ctx())).rejects.toBeInstanceOf(WorkspaceEscapeError);
    await expect(listDirTool.run({ path: 'out' }, ws.ctx())).rejects.toBeInstanceOf(WorkspaceEscapeError);
  });
});

describe('write_file', () => {
  it('creates a file and its parent directories, then overwrites it, leaving no temp file behind', async () => {
    const first = await writeFileTool.run({ path: 'deep/new/dir/notes.md', content: '- one\n' }, ws.ctx());
    expect(first).toEqual({
      output: 'created deep/new/dir/notes.md (6 bytes)',
      data: { path: 'deep/new/dir/notes.md', bytes: 6, created: true },
    });
    const second = await writeFileTool.run({ path: 'deep/new/dir/notes.md', content: 'ünï\n' }, ws.ctx());
    expect(second.output).toBe('overwrote deep/new/dir/notes.md (6 bytes)');
    expect(await read('deep/new/dir/notes.md')).toBe('ünï\n');
    expect(await readdir(join(ws.root, 'deep/new/dir'))).toEqual(['notes.md']);
  });

  it('is idempotent: writing the same content twice leaves the same file', async () => {
    await writeFileTool.run({ path: 'a.txt', content: 'same' }, ws.ctx());
    await writeFileTool.run({ path: 'a.txt', content: 'same' }, ws.ctx());
    expect(await read('a.txt')).toBe('same');
    expect(writeFileTool.idempotent).toBe(true);
  });

  it('keeps the mode of a file it replaces', async () => {
    await put('run.sh', '#!/bin/sh\n');
    await chmod(join(ws.root, 'run.sh'), 0o755);
    await writeFileTool.run({ path: 'run.sh', content: '#!/bin/sh\necho hi\n' }, ws.ctx());
    expect((await stat(join(ws.root, 'run.sh'))).mode & 0o777).toBe(0o755);
  });

  it('writes through a symlink inside the root to its target', async () => {
    await put('real.txt', 'old');
    await symlink('real.txt', join(ws.root, 'alias.txt'));
    await writeFileTool.run({ path: 'alias.txt', content: 'new' }, ws.ctx());
    expect(await read('real.txt')).toBe('new');
    expect(await read('alias.txt')).toBe('new');
  });

  it('refuses to write outside, through symlinks out, over a directory or under a file', async () => {
    await symlink(ws.outside, join(ws.root, 'out'));
    await symlink(join(ws.outside, 'secret.txt'), join(ws.root, 'secret-link'));
    await mkdir(join(ws.root, 'dir'));
    await put('file.txt', 'x');
    for (const path of ['../outside/x.txt', join(ws.outside, 'x.txt'), 'out/x.txt', 'out/new/x.txt', 'secret-link']) {
      await expect(writeFileTool.run({ path, content: 'pwned' }, ws.ctx())).rejects.toBeInstanceOf(
        WorkspaceEscapeError,
      );
    }
    expect(await readdir(ws.outside)).toEqual(['secret.txt']);
    expect(await readFile(join(ws.outside, 'secret.txt'), 'utf8')).toBe('secret');
    await expect(writeFileTool.run({ path: 'dir', content: '' }, ws.ctx())).rejects.toMatchObject({
      reason: 'is_a_directory',
    });
    await expect(writeFileTool.run({ path: 'file.txt/x', content: '' }, ws.ctx())).rejects.toMatchObject({
      reason: 'not_a_directory',
    });
  });
});

describe('edit_file', () => {
  it('replaces the one occurrence and says at which line', async () => {
    await put('a.ts', 'const a = 1;\nlet b = 2;\nconst c = 3;\n');
    const result = await editFileTool.run({ path: 'a.ts', old_text: 'let b = 2;', new_text: 'const b = 2;' }, ws.ctx());
    expect(result).toEqual({ output: 'edited a.ts: replaced 1 occurrence at line 2', data: { path: 'a.ts', line: 2 } });
    expect(await read('a.ts')).toBe('const a = 1;\nconst b = 2;\nconst c = 3;\n');
  });

  it('keeps `$` patterns in new_text literal', async () => {
    await put('a.txt', 'price: X\n');
    await editFileTool.run({ path: 'a.txt', old_text: 'X', new_text: "$& $' $1 $$" }, ws.ctx());
    expect(await read('a.txt')).toBe("price: $& $' $1 $$\n");
  });

  it('fails with the count when old_text occurs zero or several times, changing nothing', async () => {
    await put('a.ts', 'x = 1;\nx = 1;\nx = 1;\n');
    await expect(editFileTool.run({ path: 'a.ts', old_text: 'y = 1;', new_text: '' }, ws.ctx())).rejects.toMatchObject({
      reason: 'no_match',
      message: expect.stringMatching(/^old_text was not found in "a.ts" \(0 occurrences\)/),
    });
    const error = await editFileTool
      .run({ path: 'a.ts', old_text: 'x = 1;', new_text: 'x = 2;' }, ws.ctx())
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolFailedError);
    expect(error).toMatchObject({
      code: 'tool_failed',
      reason: 'ambiguous_match',
      message: expect.stringMatching(/^old_text occurs 3 times in "a.ts"; it must occur exactly once/),
    });
    expect(await read('a.ts')).toBe('x = 1;\nx = 1;\nx = 1;\n');
  });

  it('counts overlapping occurrences as ambiguous', async () => {
    await put('a.txt', 'aaa');
    await expect(editFileTool.run({ path: 'a.txt', old_text: 'aa', new_text: 'b' }, ws.ctx())).rejects.toMatchObject({
      reason: 'ambiguous_match',
    });
  });

  it('is not idempotent, refuses an empty old_text, binary and missing files, and escapes', async () => {
    expect(editFileTool.idempotent).toBe(false);
    expect(EditFileInput.safeParse({ path: 'a', old_text: '', new_text: 'x' }).success).toBe(false);
    await put('bin.dat', Buffer.from([0x61, 0x00, 0x62]));
    await symlink(join(ws.outside, 'secret.txt'), join(ws.root, 'secret-link'));
    await expect(editFileTool.run({ path: 'bin.dat', old_text: 'a', new_text: 'b' }, ws.ctx())).rejects.toMatchObject({
      reason: 'binary_file',
    });
    await expect(editFileTool.run({ path: 'nope.ts', old_text: 'a', new_text: 'b' }, ws.ctx())).rejects.toMatchObject({
      reason: 'not_found',
    });
    await expect(
      editFileTool.run({ path: 'secret-link', old_text: 'secret', new_text: 'pwned' }, ws.ctx()),
    ).rejects.toBeInstanceOf(WorkspaceEscapeError);
    expect(await readFile(join(ws.outside, 'secret.txt'), 'utf8')).toBe('secret');
  });
});
