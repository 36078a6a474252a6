import { stat } from 'node:fs/promises';
import { ProcessGroupStartError, runInProcessGroup } from '@demiurge/workers';
import { z } from 'zod';
import { defineTool } from '../tool.js';
import { ToolCancelledError, ToolFailedError, throwIfCancelled } from './errors.js';
import { classifyShellCommand } from './shell-classify.js';
import { TailBuffer } from './tail-buffer.js';
import { resolveInWorkspace } from './workspace-path.js';

/** `shell` keeps the last this many bytes of combined stdout/stderr (32 KiB). */
export const SHELL_MAX_OUTPUT_BYTES = 32 * 1024;
export const SHELL_DEFAULT_TIMEOUT_SECONDS = 60;
export const SHELL_MAX_TIMEOUT_SECONDS = 600;

export const ShellInput = z.object({
  command: z.string().min(1).describe('A command line for /bin/sh -c.'),
  cwd: z
    .string()
    .min(1)
    .optional()
    .describe('Working directory, relative to the workspace root (the root when omitted).'),
  timeout_seconds: z
    .number()
    .positive()
    .max(SHELL_MAX_TIMEOUT_SECONDS)
    .optional()
    .describe(`Stop the command after this many seconds (default ${SHELL_DEFAULT_TIMEOUT_SECONDS}).`),
  background: z
    .boolean()
    .optional()
    .describe('Run as a background task and return at once; its completion is reported later.'),
});
export type ShellInput = z.infer<typeof ShellInput>;

/** Passed to every command: nothing may wait for a pager or a terminal prompt (stdin is closed too). */
const NON_INTERACTIVE_ENV = { PAGER: 'cat', GIT_PAGER: 'cat', GIT_TERMINAL_PROMPT: '0' } as const;

/**
 * `shell { command, cwd?, timeout_seconds?, background? }`: runs `/bin/sh -c command` in a working directory
 * inside the workspace, in its own process group, and returns `exit <code>` followed by the last
 * {@link SHELL_MAX_OUTPUT_BYTES} of combined output. A non-zero exit or a timeout is a result
 * (`data: { exitCode, timedOut, signal }`); a cancellation through `ctx.signal` throws
 * {@link ToolCancelledError} once the whole group is dead. Only the working directory is contained: the
 * command itself can reach anything the host user can, which is why the effect is `shell` (approval needed)
 * unless {@link classifyShellCommand} recognises it as read-only. `background: true` is for the engine to run
 * as a task; this tool refuses it.
 *
 * @example
 * ```ts
 * const { output, data } = await shellTool.run({ command: 'pnpm test', timeout_seconds: 300 }, ctx);
 * // output: "exit 1\n…"; data: { exitCode: 1, timedOut: false, signal: null }
 * ```
 */
export const shellTool = defineTool<ShellInput>({
  name: 'shell',
  description:
    'Run a shell command (/bin/sh -c) in the workspace and return its exit code and the last ' +
    `${SHELL_MAX_OUTPUT_BYTES / 1024} KiB of combined stdout/stderr. stdin is closed; the command is stopped ` +
    `after timeout_seconds (default ${SHELL_DEFAULT_TIMEOUT_SECONDS}, at most ${SHELL_MAX_TIMEOUT_SECONDS}), ` +
    'and anything it leaves running in the background is stopped when it exits.',
  input: ShellInput,
  effect: 'shell',
  idempotent: false,
  effectOf: (input) => classifyShellCommand(input.command),
  async run(input, ctx) {
    if (input.background) {
      throw new ToolFailedError(
        'needs_task_runtime',
        'background shell needs the task runtime, which is not available here; run the command without background',
      );
    }
    throwIfCancelled(ctx.signal, 'shell');
    const given = input.cwd ?? '.';
    const cwd = await resolveInWorkspace(ctx.workspaceRoot, given, { mustExist: true });
    if (!(await stat(cwd)).isDirectory()) {
      throw new ToolFailedError('not_a_directory', `cwd "${given}" is not a directory`, given);
    }
    const timeoutSeconds = input.timeout_seconds ?? SHELL_DEFAULT_TIMEOUT_SECONDS;
    const output = new TailBuffer(SHELL_MAX_OUTPUT_BYTES);
    // The process group (held until recorded, stopped whole) is @demiurge/workers', shared with terminal tasks.
    const run = await runInProcessGroup({
      command: input.command,
      cwd,
      timeoutMs: timeoutSeconds * 1000,
      signal: ctx.signal,
      onOutput: (chunk) => output.push(chunk),
      env: { ...process.env, ...NON_INTERACTIVE_ENV },
      spawnId: ctx.toolCallId,
      ...(ctx.onProcessStarted ? { onStarted: ctx.onProcessStarted } : {}),
    }).catch((error: unknown) => {
      if (error instanceof ProcessGroupStartError) {
        throw new ToolFailedError('io', error.message, undefined, { cause: error.cause });
      }
      throw error;
    });
    if (run.cancelled) throw new ToolCancelledError('shell', { cause: ctx.signal.reason });

    const status = run.timedOut
      ? `timed out after ${timeoutSeconds} s (the command and its children were stopped)`
      : run.exitCode !== null
        ? `exit ${run.exitCode}`
        : `killed by ${run.signal ?? 'a signal'}`;
    const lines = [status];
    if (output.truncated) {
      lines.push(`[output truncated: showing the last ${SHELL_MAX_OUTPUT_BYTES} of ${output.total} bytes]`);
    }
    const text = output.text();
    lines.push(text === '' ? '(no output)' : text.replace(/\n$/, ''));
    if (run.strayProcessesStopped) lines.push('[processes the command left running in the background were stopped]');
    return {
      output: lines.join('\n'),
      data: {
        exitCode: run.timedOut ? null : run.exitCode,
        timedOut: run.timedOut,
        signal: run.signal,
        ...(output.truncated ? { truncated: true } : {}),
      },
    };
  },
});
