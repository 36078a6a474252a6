import type { CrashPhase } from './crash-point.js';

/** One line of a host's commit trace: the n-th commit of that process, its positions and event types. */
export interface CommitTraceLine {
  readonly commit: number;
  readonly phase: CrashPhase;
  readonly first: number;
  readonly last: number;
  readonly types: readonly string[];
  /** Present on the line written right before the host killed itself at this point. */
  readonly crash?: true;
}

/** What a commit trace file says: every commit made, and the crash line if the host crashed. */
export interface CommitTrace {
  /** Commits made (committed: their `after` line), in order. */
  readonly commits: readonly CommitTraceLine[];
  /** The point the host crashed at, with the commit's events. */
  readonly crash: CommitTraceLine | undefined;
}

/** Reads a commit trace (JSON lines); a line cut short by the crash is ignored. */
export function parseCommitTrace(text: string): CommitTrace {
  const commits: CommitTraceLine[] = [];
  let crash: CommitTraceLine | undefined;
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    let line: CommitTraceLine;
    try {
      line = JSON.parse(raw) as CommitTraceLine;
    } catch {
      continue;
    }
    if (line.crash) crash = line;
    else commits.push(line);
  }
  return { commits, crash };
}

/**
 * A crash point named for people: `commit 7 before (turn.started, run.started)`.
 * @example
 * describeCommit({ commit: 7, phase: 'before', first: 12, last: 13, types: ['run.started', 'turn.started'] });
 */
export function describeCommit(line: Pick<CommitTraceLine, 'commit' | 'phase' | 'types'>): string {
  const types = [...new Set(line.types)];
  const shown = types.length > 6 ? [...types.slice(0, 6), `+${types.length - 6} more`] : types;
  return `commit ${line.commit} ${line.phase} (${shown.join(', ')})`;
}
