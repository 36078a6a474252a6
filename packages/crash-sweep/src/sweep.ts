import { type CommitTrace, type CommitTraceLine, describeCommit } from './commit-trace.js';
import { type CrashPoint, formatCrashPoint, planCrashPoints } from './crash-point.js';

/** What one check found wrong in one run. */
export interface CheckProblem {
  readonly check: string;
  readonly detail: string;
}

/** What the driver saw in one run of a scenario: the first host's commit trace and what its checks found. */
export interface PointRun {
  /** The commit trace of the host process started first (the one that crashes, when a point is given). */
  readonly trace: CommitTrace;
  /** Every failed check of the run (invariants, effects twice, acknowledged lost, not settled). */
  readonly problems: readonly CheckProblem[];
}

/** What a run is given besides its scenario and crash point. */
export interface PointRunContext {
  /** The Agent Core the host runs (the driver's default when absent). */
  readonly coreDir: string | undefined;
}

/**
 * Runs a scenario once on a fresh home: its host crashes at `crash` (no crash when undefined) and is restarted
 * on the same home; then the scenario is settled and checked. A real-process driver SIGKILLs a `demiurge serve`
 * child at the store's commit hook (`DEMIURGE_CRASH_AT_COMMIT`, see docs/crash-sweep.md).
 */
export interface CrashPointDriver<S> {
  run(scenario: S, crash: CrashPoint | undefined, context: PointRunContext): Promise<PointRun>;
}

/** A problem of the sweep, with the crash point it showed at (`uncrashed` for the counting run). */
export interface SweepProblem extends CheckProblem {
  readonly point: string;
}

/** One crash point's run, as reported to `onPoint`. */
export interface PointOutcome {
  readonly point: CrashPoint;
  /** The point named with the events of its commit: `commit 7 before (run.started, turn.started)`. */
  readonly label: string;
  /** The host crashed there (false: this run made fewer commits and never reached the point). */
  readonly reached: boolean;
  readonly problems: readonly CheckProblem[];
  readonly durationMs: number;
}

export interface SweepOptions<S extends { readonly name: string }> {
  readonly scenario: S;
  readonly driver: CrashPointDriver<S>;
  /** The Agent Core to sweep (passed to the driver). */
  readonly coreDir?: string;
  /** At most this many crash points, spread deterministically (first and last included); absent: every point. */
  readonly sample?: number;
  /**
   * Only the points this accepts (given the counting run's line of the point's commit): a sweep of the commits
   * that append some event type, say. Applied before `sample`.
   */
  readonly select?: (point: CrashPoint, commit: CommitTraceLine | undefined) => boolean;
  /** Told after each crash point's run (progress, logs). */
  readonly onPoint?: (outcome: PointOutcome) => void;
}

/** What a sweep of one scenario found. */
export interface SweepResult {
  readonly scenario: string;
  /** Commits the uncrashed run made: the scenario has twice as many crash points. */
  readonly commits: number;
  /** Crash points run (every point, or the sample). */
  readonly planned: number;
  /** Crash points the host actually crashed at (and was restarted and checked after). */
  readonly covered: number;
  /** Planned points a run did not reach (it made fewer commits than the counting run). */
  readonly notReached: readonly string[];
  /** Every failed check, with its crash point. Empty: the sweep passed. */
  readonly problems: readonly SweepProblem[];
  /** Whether every crash point was planned (no sample). */
  readonly full: boolean;
  readonly durationMs: number;
}

/**
 * The crash-point sweep of one scenario: a first, uncrashed run counts its commits (and must pass its checks);
 * then, for each commit n, a run crashes the host right before n and one right after it, restarts it on the
 * same home and checks the invariants and that the scenario completed or was correctly settled.
 * @example
 * const result = await sweepCrashPoints({ scenario: deliveryScenario, driver: hostDriver, sample: 12 });
 * console.log(formatSweepResult(result)); // delivery: 14 commits, 12 of 28 crash points covered, 0 problems
 */
export async function sweepCrashPoints<S extends { readonly name: string }>(
  options: SweepOptions<S>,
): Promise<SweepResult> {
  const started = Date.now();
  const context: PointRunContext = { coreDir: options.coreDir };
  const problems: SweepProblem[] = [];
  const counting = await options.driver.run(options.scenario, undefined, context);
  for (const p of counting.problems) problems.push({ point: 'uncrashed', ...p });
  const commits = counting.trace.commits.length;
  const select = options.select;
  const byCommit = new Map(counting.trace.commits.map((line) => [line.commit, line]));
  const selected = select ? planCrashPoints(commits).filter((p) => select(p, byCommit.get(p.commit))) : undefined;
  const points = selected ? pick(selected, options.sample) : planCrashPoints(commits, { sample: options.sample });
  const notReached: string[] = [];
  let covered = 0;
  for (const point of points) {
    const pointStarted = Date.now();
    const run = await options.driver.run(options.scenario, point, context);
    const crash = run.trace.crash;
    const named = formatCrashPoint(point);
    const label = crash ? describeCommit(crash) : `commit ${point.commit} ${point.phase} (not reached)`;
    const found: CheckProblem[] = [...run.problems];
    if (crash && (crash.commit !== point.commit || crash.phase !== point.phase)) {
      found.push({
        check: 'crashed at the planned point',
        detail: `planned ${named}, crashed at ${describeCommit(crash)}`,
      });
    }
    if (crash) covered++;
    else notReached.push(named);
    for (const p of found) problems.push({ point: `${named} ${label}`, ...p });
    options.onPoint?.({
      point,
      label,
      reached: crash !== undefined,
      problems: found,
      durationMs: Date.now() - pointStarted,
    });
  }
  return {
    scenario: options.scenario.name,
    commits,
    planned: points.length,
    covered,
    notReached,
    problems,
    full: !selected && points.length === commits * 2,
    durationMs: Date.now() - started,
  };
}

/** `sample` of `points`, spread evenly (the first and the last included), as {@link planCrashPoints} does. */
function pick(points: readonly CrashPoint[], sample: number | undefined): CrashPoint[] {
  if (sample === undefined || sample >= points.length) return [...points];
  if (sample <= 1) return points.slice(0, Math.max(0, sample));
  const picked = new Set<number>();
  for (let j = 0; j < sample; j++) picked.add(Math.round((j * (points.length - 1)) / (sample - 1)));
  return [...picked].sort((x, y) => x - y).map((i) => points[i]!);
}

/**
 * One line per sweep, then its problems grouped by check (at most `limit` each, default 5).
 * @example
 * formatSweepResult(result);
 * // delivery: 14 commits, 28 of 28 crash points covered (full), 0 problems, 61.2 s
 */
export function formatSweepResult(result: SweepResult, limit = 5): string {
  const lines = [
    `${result.scenario}: ${result.commits} commits, ${result.covered} of ${result.commits * 2} crash points covered` +
      `${result.full ? ' (full)' : ` (sample of ${result.planned})`}` +
      `${result.notReached.length > 0 ? `, ${result.notReached.length} not reached` : ''}` +
      `, ${result.problems.length} problems, ${(result.durationMs / 1000).toFixed(1)} s`,
  ];
  const byCheck = new Map<string, SweepProblem[]>();
  for (const p of result.problems) byCheck.set(p.check, [...(byCheck.get(p.check) ?? []), p]);
  for (const [check, list] of byCheck) {
    lines.push(`  ${check}: ${list.length}`);
    for (const p of list.slice(0, limit)) lines.push(`    at ${p.point}: ${p.detail}`);
  }
  return lines.join('\n');
}
