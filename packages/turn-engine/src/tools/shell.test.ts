import { mkdir, readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { readProcStat } from '@demiurge/workers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempWorkspace, type TempWorkspace } from '../../test-fixtures/workspace.js';
import { ToolCancelledError, ToolFailedError, WorkspaceEscapeError } from './errors.js';
import { SHELL_MAX_OUTPUT_BYTES, ShellInput, shellTool } from './shell.js';

let ws: TempWorkspace;
beforeEach(async () => {
  ws = await makeTempWorkspace();
});
afterEach(() => ws.cleanup());

const sh = (command: string, extra: Partial<ShellInput> = {}, signal?: AbortSignal) =>
  shellTool.run({ command, ...extra }, ws.ctx(signal));

/** Whether `pid` is still running: it exists and (where /proc tells) is not a zombie waiting for init. */
async function alive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const state = await readProcStat(pid);
  return state === undefined ? process.platform !== 'linux' : state.state !== 'Z';
}

/** The pid a command wrote to `file` in the workspace, once it is there. */
async function pidFrom(file: string): Promise<number> {
  for (let i = 0; i < 100; i += 1) {
    const text = await readFile(join(ws.root, file), 'utf8').catch(() => '');
    if (text.trim() !== '') return Number(text.trim());
    await delay(20);
  }
  throw new Error(`no pid in ${file}`);
}

describe('shell', () => {
  it('returns the exit code first, then combined stdout and stderr', async () => {
    expect(await sh('echo out; echo err >&2')).toEqual({
      output: 'exit 0\nout\nerr',
      data: { exitCode: 0, timedOut: false, signal: null },
    });
    expect(await sh('true')).toMatchObject({ output: 'exit 0\n(no output)' });
  });

  it('reports a non-zero exit as a result, not an error', async () => {
    expect(await sh('echo failing; exit 3')).toEqual({
      output: 'exit 3\nfailing',
      data: { exitCode: 3, timedOut: false, signal: null },
    });
  });

  it('runs in the workspace root by default, in a cwd inside it when given, with stdin closed', async () => {
    await mkdir(join(ws.root, 'sub'));
    expect((await sh('pwd')).output).toBe(`exit 0\n${ws.root}`);
    expect((await sh('pwd', { cwd: 'sub' })).output).toBe(`exit 0\n${join(ws.root, 'sub')}`);
    expect((await sh('cat; echo done')).output).toBe('exit 0\ndone');
  });

  it('refuses a cwd outside the workspace, missing, or not a directory', async () => {
    await symlink(ws.outside, join(ws.root, 'out'));
    await expect(sh('pwd', { cwd: '..' })).rejects.toBeInstanceOf(WorkspaceEscapeError);
    await expect(sh('pwd', { cwd: '/tmp' })).rejects.toBeInstanceOf(WorkspaceEscapeError);
    await expect(sh('pwd', { cwd: 'out' })).rejects.toBeInstanceOf(WorkspaceEscapeError);
    await expect(sh('pwd', { cwd: 'nope' })).rejects.toMatchObject({ reason: 'not_found' });
    await mkdir(join(ws.root, 'd'));
    await sh('echo x > d/f');
    await expect(sh('pwd', { cwd: 'd/f' })).rejects.toMatchObject({ reason: 'not_a_directory' });
  });

  it('keeps the last 32 KiB of a large output and says how much there was', async () => {
    const { output, data } = await sh("head -c 100000 /dev/zero | tr '\\0' a; echo; echo END");
    const [status, note, ...rest] = output.split('\n');
    expect(status).toBe('exit 0');
    expect(note).toBe(`[output truncated: showing the last ${SHELL_MAX_OUTPUT_BYTES} of 100005 bytes]`);
    expect(rest.join('\n')).toBe(`${'a'.repeat(SHELL_MAX_OUTPUT_BYTES - 5)}\nEND`);
    expect(data).toMatchObject({ exitCode: 0, truncated: true });
  });

  it('on timeout stops the whole process group, grandchildren included, and says so', async () => {
    const started = Date.now();
    const result = await sh('sleep 30 & echo $! > bg.pid; echo started; sleep 30', { timeout_seconds: 0.5 });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.output).toBe('timed out after 0.5 s (the command and its children were stopped)\nstarted');
    expect(result.data).toEqual({ exitCode: null, timedOut: true, signal: 'SIGTERM' });
    expect(await alive(await pidFrom('bg.pid'))).toBe(false);
  });

  it('escalates to SIGKILL when the group ignores SIGTERM', async () => {
    const started = Date.now();
    const result = await sh("trap '' TERM; sleep 30 & echo $! > bg.pid; sleep 30", { timeout_seconds: 0.3 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    expect(result.data).toEqual({ exitCode: null, timedOut: true, signal: 'SIGKILL' });
    expect(await alive(await pidFrom('bg.pid'))).toBe(false);
  });

  it('on abort stops the whole group, then throws ToolCancelledError', async () => {
    const controller = new AbortController();
    const run = sh('sleep 30 & echo $! > bg.pid; sleep 30', {}, controller.signal);
    const grandchild = await pidFrom('bg.pid');
    expect(await alive(grandchild)).toBe(true);
    controller.abort(new Error('turn cancelled'));
    const error = await run.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolCancelledError);
    expect(error).toMatchObject({ name: 'ToolCancelledError', code: 'tool_failed', cancelled: true, tool: 'shell' });
    expect(await alive(grandchild)).toBe(false);
  });

  it('does not start when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(sh('echo x > ran.txt', {}, controller.signal)).rejects.toBeInstanceOf(ToolCancelledError);
    await expect(readFile(join(ws.root, 'ran.txt'))).rejects.toThrow(/ENOENT/);
  });

  it('stops processes the command leaves in the background when it exits', async () => {
    const started = Date.now();
    const result = await sh('sleep 30 > /dev/null 2>&1 & echo $! > bg.pid; echo done');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.output).toBe('exit 0\ndone\n[processes the command left running in the background were stopped]');
    expect(await alive(await pidFrom('bg.pid'))).toBe(false);
    // One that keeps the pipe open does not hold the call until its own end either.
    const holding = await sh('sleep 30 & echo $! > bg2.pid; echo done');
    expect(holding.output).toMatch(/^exit 0\ndone\n\[processes/);
    expect(await alive(await pidFrom('bg2.pid'))).toBe(false);
  });

  it('refuses background: true clearly (the engine runs those as tasks)', async () => {
    const error = await sh('sleep 1', { background: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolFailedError);
    expect(error).toMatchObject({ reason: 'needs_task_runtime' });
    expect((error as Error).message).toMatch(/^background shell needs the task runtime/);
  });

  it('validates its input: timeout in (0, 600], a non-empty command', () => {
    expect(ShellInput.safeParse({ command: 'ls', timeout_seconds: 600, background: false }).success).toBe(true);
    expect(ShellInput.safeParse({ command: 'ls', timeout_seconds: 601 }).success).toBe(false);
    expect(ShellInput.safeParse({ command: 'ls', timeout_seconds: 0 }).success).toBe(false);
    expect(ShellInput.safeParse({ command: '' }).success).toBe(false);
  });

  it('is effect shell and not idempotent, with effectOf for read-only commands', () => {
    expect(shellTool.effect).toBe('shell');
    expect(shellTool.idempotent).toBe(false);
    expect(shellTool.effectOf?.({ command: 'git status' })).toBe('read');
    expect(shellTool.effectOf?.({ command: 'git commit -am x' })).toBe('git');
    expect(shellTool.effectOf?.({ command: 'rm -rf build' })).toBe('shell');
  });
});

describe('shell with onProcessStarted (the group recorded before its command runs)', () => {
  it('runs the command only once the record resolved, with the spawn id in its environment', async () => {
    const seen: { pid: number; pgid: number; spawnId: string; startMarker: string | undefined }[] = [];
    const ctx = {
      ...ws.ctx(),
      onProcessStarted: async (p: (typeof seen)[number]) => {
        // Held: nothing of the command has run yet.
        await delay(100);
        expect(await readFile(join(ws.root, 'ran.txt'), 'utf8').catch(() => 'absent')).toBe('absent');
        seen.push(p);
      },
    };
    const result = await shellTool.run({ command: 'echo $$ $DEMIURGE_SPAWN_ID > ran.txt; cat' }, ctx);
    expect(result.output).toBe('exit 0\n(no output)');
    const [pid, spawnId] = (await readFile(join(ws.root, 'ran.txt'), 'utf8')).trim().split(' ');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ pid: Number(pid), pgid: Number(pid), spawnId: ctx.toolCallId });
    expect(spawnId).toBe(ctx.toolCallId);
    if (process.platform === 'linux') expect(seen[0]!.startMarker).toMatch(/^linux:[^:]+:\d+$/);
  });

  it('runs nothing when the record fails, and says why', async () => {
    const ctx = {
      ...ws.ctx(),
      onProcessStarted: async () => {
        throw new Error('disk full');
      },
    };
    await expect(shellTool.run({ command: 'echo ran > ran.txt' }, ctx)).rejects.toThrow(
      /could not record the process before running it: disk full/,
    );
    await delay(100);
    expect(await readFile(join(ws.root, 'ran.txt'), 'utf8').catch(() => 'absent')).toBe('absent');
  });
});
