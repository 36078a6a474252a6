import { describe, expect, it } from 'vitest';
import { parseCommitTrace } from './commit-trace.js';
import { formatCrashPoint, parseCrashPoint, planCrashPoints } from './crash-point.js';
import { type CrashPointDriver, formatSweepResult, type PointRun, sweepCrashPoints } from './sweep.js';

describe('crash points', () => {
  it('every point is before and after each commit, in order; a sample keeps the first and the last', () => {
    expect(planCrashPoints(2).map(formatCrashPoint)).toEqual(['1:before', '1:after', '2:before', '2:after']);
    const sample = planCrashPoints(50, { sample: 10 }).map(formatCrashPoint);
    expect(sample).toHaveLength(10);
    expect(sample[0]).toBe('1:before');
    expect(sample.at(-1)).toBe('50:after');
    expect(planCrashPoints(50, { sample: 10 }).map(formatCrashPoint)).toEqual(sample);
    // Both phases, whatever the spacing.
    const phases = planCrashPoints(22, { sample: 8 }).map((p) => p.phase);
    expect(phases.filter((p) => p === 'before').length).toBeGreaterThanOrEqual(3);
    expect(phases.filter((p) => p === 'after').length).toBeGreaterThanOrEqual(3);
    expect(planCrashPoints(3, { sample: 100 })).toHaveLength(6);
  });

  it('parses <n>:<before|after> and names what is wrong otherwise', () => {
    expect(parseCrashPoint('12:after')).toEqual({ commit: 12, phase: 'after' });
    expect(() => parseCrashPoint('0:before')).toThrow('crash point "0:before" is not <n>:<before|after>');
    expect(() => parseCrashPoint('3:during')).toThrow('is not <n>:<before|after>');
  });

  it('reads a trace whose last line was cut by the crash', () => {
    const text = [
      '{"commit":1,"phase":"after","first":1,"last":2,"types":["session.started","run.queued"]}',
      '{"commit":2,"phase":"before","first":3,"last":3,"types":["turn.started"],"crash":true}',
      '{"commit":2,"pha',
    ].join('\n');
    const trace = parseCommitTrace(text);
    expect(trace.commits.map((c) => c.commit)).toEqual([1]);
    expect(trace.crash).toMatchObject({ commit: 2, phase: 'before', types: ['turn.started'] });
  });
});

/** A scenario of `commits` commits; the driver "crashes" where asked and finds a problem at `buggy`. */
function fakeDriver(commits: number, buggy?: string): CrashPointDriver<{ name: string }> & { runs: string[] } {
  const runs: string[] = [];
  return {
    runs,
    async run(_scenario, crash): Promise<PointRun> {
      runs.push(crash ? formatCrashPoint(crash) : 'uncrashed');
      const line = (commit: number) => ({
        commit,
        phase: 'after' as const,
        first: commit,
        last: commit,
        types: [`e.${commit}`],
      });
      if (!crash) return { trace: { commits: [1, 2, 3].slice(0, commits).map(line), crash: undefined }, problems: [] };
      const reached = crash.commit <= commits;
      return {
        trace: {
          commits: [],
          crash: reached ? { ...line(crash.commit), phase: crash.phase, crash: true } : undefined,
        },
        problems:
          formatCrashPoint(crash) === buggy
            ? [{ check: 'acknowledged submit lost', detail: 'turn trn_1 has no events' }]
            : [],
      };
    },
  };
}

describe('sweepCrashPoints', () => {
  it('counts the commits, crashes before and after each, and names the point of each problem', async () => {
    const driver = fakeDriver(3, '2:before');
    const result = await sweepCrashPoints({ scenario: { name: 'turn' }, driver });
    expect(driver.runs).toEqual(['uncrashed', '1:before', '1:after', '2:before', '2:after', '3:before', '3:after']);
    expect(result).toMatchObject({ scenario: 'turn', commits: 3, planned: 6, covered: 6, full: true });
    expect(result.problems).toEqual([
      {
        point: '2:before commit 2 before (e.2)',
        check: 'acknowledged submit lost',
        detail: 'turn trn_1 has no events',
      },
    ]);
    expect(formatSweepResult(result)).toContain('turn: 3 commits, 6 of 6 crash points covered (full), 1 problems');
    expect(formatSweepResult(result)).toContain('at 2:before commit 2 before (e.2): turn trn_1 has no events');
  });

  it('a sample runs fewer points; a point a run never reaches is reported, not covered', async () => {
    const result = await sweepCrashPoints({ scenario: { name: 'x' }, driver: fakeDriver(3), sample: 2 });
    expect(result).toMatchObject({ planned: 2, covered: 2, full: false, problems: [] });
    const short: CrashPointDriver<{ name: string }> = {
      run: async (s, crash, c) => (crash ? fakeDriver(1).run(s, crash, c) : fakeDriver(3).run(s, crash, c)),
    };
    const selected = await sweepCrashPoints({
      scenario: { name: 'z' },
      driver: fakeDriver(3),
      select: (point, commit) => point.phase === 'before' && commit?.types.includes('e.2') === true,
    });
    expect(selected).toMatchObject({ planned: 1, covered: 1, full: false });
    const partial = await sweepCrashPoints({ scenario: { name: 'y' }, driver: short });
    expect(partial.covered).toBe(2);
    expect(partial.notReached).toEqual(['2:before', '2:after', '3:before', '3:after']);
  });
});
