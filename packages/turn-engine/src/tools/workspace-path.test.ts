import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempWorkspace, type TempWorkspace } from '../../test-fixtures/workspace.js';
import { ToolFailedError, WorkspaceEscapeError } from './errors.js';
import { resolveInWorkspace, workspaceRelative } from './workspace-path.js';

let ws: TempWorkspace;
beforeEach(async () => {
  ws = await makeTempWorkspace();
  await mkdir(join(ws.root, 'src'));
  await writeFile(join(ws.root, 'src', 'a.ts'), 'export {};\n');
  await writeFile(join(ws.outside, 'secret.txt'), 'secret');
});
afterEach(() => ws.cleanup());

describe('resolveInWorkspace', () => {
  it('resolves relative and absolute paths inside the root to their real path', async () => {
    expect(await resolveInWorkspace(ws.root, 'src/a.ts')).toBe(join(ws.root, 'src', 'a.ts'));
    expect(await resolveInWorkspace(ws.root, join(ws.root, 'src/a.ts'))).toBe(join(ws.root, 'src', 'a.ts'));
    expect(await resolveInWorkspace(ws.root, '.')).toBe(ws.root);
    expect(await resolveInWorkspace(ws.root, 'src/../src/./a.ts')).toBe(join(ws.root, 'src', 'a.ts'));
    expect(await resolveInWorkspace(ws.root, 'new/dir/file.txt')).toBe(join(ws.root, 'new', 'dir', 'file.txt'));
  });

  it('refuses `..` escapes, naming the path and the root', async () => {
    const error = await resolveInWorkspace(ws.root, '../outside/secret.txt').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkspaceEscapeError);
    expect(error).toMatchObject({ code: 'workspace_escape', path: '../outside/secret.txt', root: ws.root });
    expect((error as Error).message).toContain('"../outside/secret.txt" is outside the workspace root');
    expect((error as Error).message).toContain(ws.root);
    await expect(resolveInWorkspace(ws.root, 'src/../../outside/new.txt')).rejects.toBeInstanceOf(WorkspaceEscapeError);
    await expect(resolveInWorkspace(ws.root, '..')).rejects.toBeInstanceOf(WorkspaceEscapeError);
  });

  it('refuses absolute paths outside the root, existing or not', async () => {
    await expect(resolveInWorkspace(ws.root, '/etc/passwd')).rejects.toBeInstanceOf(WorkspaceEscapeError);
    await expect(resolveInWorkspace(ws.root, '/nonexistent/dir/x', { forWrite: true })).rejects.toBeInstanceOf(
      WorkspaceEscapeError,
    );
    // A sibling whose name starts with the root's name is not inside it.
    await mkdir(`${ws.root}-evil`);
    await expect(resolveInWorkspace(ws.root, `${ws.root}-evil`)).rejects.toBeInstanceOf(WorkspaceEscapeError);
  });

  it('refuses a symlink to a file outside (to /etc too)', async () => {
    await symlink('/etc/passwd', join(ws.root, 'etc-link'));
    await symlink(join(ws.outside, 'secret.txt'), join(ws.root, 'secret-link'));
    await expect(resolveInWorkspace(ws.root, 'etc-link')).rejects.toMatchObject({
      name: 'WorkspaceEscapeError',
      resolved: '/etc/passwd',
    });
    await expect(resolveInWorkspace(ws.root, 'secret-link', { forWrite: true })).rejects.toBeInstanceOf(
      WorkspaceEscapeError,
    );
  });

  it('refuses paths through a symlinked directory that escapes, including new files under it', async () => {
    await symlink(ws.outside, join(ws.root, 'out-dir'));
    await symlink('/etc', join(ws.root, 'etc'));
    await expect(resolveInWorkspace(ws.root, 'out-dir/secret.txt')).rejects.toBeInstanceOf(WorkspaceEscapeError);
    await expect(resolveInWorkspace(ws.root, 'etc/passwd')).rejects.toBeInstanceOf(WorkspaceEscapeError);
    await expect(resolveInWorkspace(ws.root, 'out-dir/new.txt', { forWrite: true })).rejects.toBeInstanceOf(
      WorkspaceEscapeError,
    );
    await expect(resolveInWorkspace(ws.root, 'out-dir/deep/new/file.txt', { forWrite: true })).rejects.toBeInstanceOf(
      WorkspaceEscapeError,
    );
  });

  it('refuses a dangling symlink whose target would be created outside', async () => {
    await symlink(join(ws.outside, 'not-yet.txt'), join(ws.root, 'dangling'));
    await expect(resolveInWorkspace(ws.root, 'dangling', { forWrite: true })).rejects.toMatchObject({
      name: 'WorkspaceEscapeError',
      resolved: join(ws.outside, 'not-yet.txt'),
    });
  });

  it('allows symlinks inside the root that point inside, resolving to the target', async () => {
    await symlink('src', join(ws.root, 'src-link'));
    await symlink(join(ws.root, 'src', 'a.ts'), join(ws.root, 'a-link.ts'));
    await symlink('src/later.ts', join(ws.root, 'later-link.ts'));
    expect(await resolveInWorkspace(ws.root, 'src-link/a.ts')).toBe(join(ws.root, 'src', 'a.ts'));
    expect(await resolveInWorkspace(ws.root, 'a-link.ts', { mustExist: true })).toBe(join(ws.root, 'src', 'a.ts'));
    expect(await resolveInWorkspace(ws.root, 'later-link.ts', { forWrite: true })).toBe(
      join(ws.root, 'src', 'later.ts'),
    );
  });

  it('accepts a root given through a symlink', async () => {
    const alias = join(ws.outside, 'alias');
    await symlink(ws.root, alias);
    expect(await resolveInWorkspace(alias, 'src/a.ts')).toBe(join(ws.root, 'src', 'a.ts'));
    await expect(resolveInWorkspace(alias, '../outside/secret.txt')).rejects.toBeInstanceOf(WorkspaceEscapeError);
  });

  it('fails clearly for a missing target, a file used as a directory, a directory to write, a loop', async () => {
    await expect(resolveInWorkspace(ws.root, 'nope.txt', { mustExist: true })).rejects.toMatchObject({
      name: 'ToolFailedError',
      code: 'tool_failed',
      reason: 'not_found',
      message: '"nope.txt" does not exist in the workspace',
    });
    await expect(resolveInWorkspace(ws.root, 'src/a.ts/x', { forWrite: true })).rejects.toMatchObject({
      reason: 'not_a_directory',
    });
    await expect(resolveInWorkspace(ws.root, 'src', { forWrite: true })).rejects.toMatchObject({
      reason: 'is_a_directory',
    });
    await expect(resolveInWorkspace(ws.root, '.', { forWrite: true })).rejects.toMatchObject({
      reason: 'is_a_directory',
    });
    await symlink('loop-b', join(ws.root, 'loop-a'));
    await symlink('loop-a', join(ws.root, 'loop-b'));
    await expect(resolveInWorkspace(ws.root, 'loop-a', { forWrite: true })).rejects.toBeInstanceOf(ToolFailedError);
    await expect(resolveInWorkspace(ws.root, 'bad\0name')).rejects.toMatchObject({ reason: 'invalid_path' });
  });

  it('workspaceRelative gives a slash path or "."', () => {
    expect(workspaceRelative(ws.root, join(ws.root, 'src', 'a.ts'))).toBe('src/a.ts');
    expect(workspaceRelative(ws.root, ws.root)).toBe('.');
  });
});
