import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolContext } from '../src/tool.js';

/** A temporary workspace root with a sibling directory outside it, for containment tests. */
export interface TempWorkspace {
  /** Real path of the workspace root. */
  readonly root: string;
  /** Real path of a directory next to the root (outside it). */
  readonly outside: string;
  ctx(signal?: AbortSignal): ToolContext;
  cleanup(): Promise<void>;
}

export async function makeTempWorkspace(): Promise<TempWorkspace> {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'demiurge-tools-')));
  const root = join(base, 'workspace');
  const outside = join(base, 'outside');
  await mkdir(root);
  await mkdir(outside);
  return {
    root,
    outside,
    ctx: (signal = new AbortController().signal) => ({
      workspaceRoot: root,
      signal,
      sessionId: 'ses_test',
      turnId: 'turn_test',
      runId: 'run_test',
      toolCallId: 'call_test',
    }),
    cleanup: () => rm(base, { recursive: true, force: true }),
  };
}
