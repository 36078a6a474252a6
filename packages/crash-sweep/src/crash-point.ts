/** Where a commit is when the host crashes: right before its `COMMIT`, or right after it (before anyone is told). */
export type CrashPhase = 'before' | 'after';

/** One crash point: the n-th commit (1-based) of the host process, and before or after it. */
export interface CrashPoint {
  readonly commit: number;
  readonly phase: CrashPhase;
}

/** `<n>:<before|after>`: the host SIGKILLs itself at that commit (read once, when the host starts). */
export const CRASH_AT_COMMIT_ENV = 'DEMIURGE_CRASH_AT_COMMIT';
/** A file the host appends one JSON line to per commit ({@link CommitTraceLine}), and one at its crash. */
export const COMMIT_TRACE_ENV = 'DEMIURGE_COMMIT_TRACE';
/** A bug injected on purpose, for a test that proves the sweep can fail: `ack-before-commit`. */
export const INJECT_BUG_ENV = 'DEMIURGE_INJECT_BUG';

/**
 * The value of {@link CRASH_AT_COMMIT_ENV} for a point.
 * @example
 * formatCrashPoint({ commit: 7, phase: 'before' }); // '7:before'
 */
export function formatCrashPoint(point: CrashPoint): string {
  return `${point.commit}:${point.phase}`;
}

/** Reads `<n>:<before|after>`; throws naming the value when it is not that. */
export function parseCrashPoint(value: string): CrashPoint {
  const match = /^([1-9]\d*):(before|after)$/.exec(value.trim());
  if (!match) throw new Error(`crash point "${value}" is not <n>:<before|after> (e.g. 7:before)`);
  return { commit: Number(match[1]), phase: match[2] as CrashPhase };
}

/**
 * The crash points to run for a scenario that made `commits` commits: every one (before and after each
 * commit, in order), or with `sample` a deterministic spread of at most that many: commits evenly spaced, the
 * phase alternating, from `1:before` to `<last>:after`.
 * @example
 * planCrashPoints(2); // 1:before, 1:after, 2:before, 2:after
 * planCrashPoints(50, { sample: 10 }).length; // 10
 */
export function planCrashPoints(commits: number, options: { sample?: number | undefined } = {}): CrashPoint[] {
  const all: CrashPoint[] = [];
  for (let commit = 1; commit <= commits; commit++) {
    all.push({ commit, phase: 'before' }, { commit, phase: 'after' });
  }
  const sample = options.sample;
  if (sample === undefined || sample >= all.length) return all;
  if (sample < 1) return [];
  if (sample === 1) return [all[0]!];
  // Commits spread evenly, the phase alternating (before, after, before, ...), the last point `after` the last
  // commit: both phases are sampled whatever the spacing.
  const picked = new Map<string, CrashPoint>();
  for (let j = 0; j < sample; j++) {
    const commit = 1 + Math.round((j * (commits - 1)) / (sample - 1));
    const phase: CrashPhase = j === sample - 1 || j % 2 === 1 ? 'after' : 'before';
    picked.set(`${commit}:${phase}`, { commit, phase });
  }
  return [...picked.values()];
}
