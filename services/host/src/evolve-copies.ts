import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { EventStore } from '@demiurge/event-store';
import { taskBoardReader } from '@demiurge/projector-task-board';
import { type CoreFiles, unifiedDiff } from '@demiurge/slots';
import { isFinished, openArtifactFile, type TaskContext, taskArtifactDir } from '@demiurge/workers';

/** Where evolve tasks keep their isolated working copies. */
export const evolveCopiesDir = (home: string): string => join(home, 'core-store', 'evolve');

/** Where an evolve task's isolated working copy lives. */
export const evolveWorkingCopy = (home: string, taskId: string): string => join(evolveCopiesDir(home), taskId);

/** Removes an evolve task's working copy (nothing when there is none). */
export function discardEvolveCopy(home: string, taskId: string): Promise<void> {
  return rm(evolveWorkingCopy(home, taskId), { recursive: true, force: true });
}

/**
 * Removes the working copies whose evolve task is settled (completed, failed, cancelled, ...) or unknown to the
 * log: what a host killed after its task's ending, or before a failed evolve's copy was removed, left behind.
 * A copy of a task still running (here or on another host) is kept. Returns the task ids whose copy was removed.
 */
export async function sweepEvolveCopies(home: string, store: EventStore): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(evolveCopiesDir(home));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const board = taskBoardReader(store);
  const removed: string[] = [];
  for (const taskId of names) {
    const task = await board.get(taskId);
    if (task && !isFinished(task.status)) continue;
    await discardEvolveCopy(home, taskId);
    removed.push(taskId);
  }
  return removed;
}

/**
 * Records what an evolve proposed before its working copy goes: the unified diff from its base to the
 * proposal, as the task's artifact `proposal.diff` (`task.artifact_recorded`). Resolves with the file's path.
 */
export async function recordProposal(ctx: TaskContext, base: CoreFiles, proposed: CoreFiles): Promise<string> {
  const dir = await taskArtifactDir(ctx.artifactsDir, ctx.task.taskId);
  const path = join(dir, 'proposal.diff');
  const sink = await openArtifactFile(path);
  await sink.write(Buffer.from(`${unifiedDiff(base, proposed).join('\n')}\n`));
  const { bytes, sha256 } = await sink.close();
  await ctx.facts.artifactRecorded({
    artifactId: `${ctx.task.taskId}:proposal`,
    name: 'proposal.diff',
    path,
    bytes,
    sha256,
  });
  return path;
}
