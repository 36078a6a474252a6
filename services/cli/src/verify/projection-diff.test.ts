import { describe, expect, it } from 'vitest';
import { describeDifference, diffProjection, diffValues } from './projection-diff.js';

describe('diffProjection', () => {
  it('finds nothing when the documents are equal, whatever their key order', () => {
    const live = { runs: { r1: { status: 'running', owner: 'h', turnIds: ['t1'] } } };
    const rebuilt = { runs: { r1: { turnIds: ['t1'], owner: 'h', status: 'running' } } };
    expect(diffProjection('runs', live, rebuilt)).toEqual([]);
  });

  it('reports missing, extra and changed documents in collection then id order, with the fields that differ', () => {
    const live = {
      'live-runs': { r2: { status: 'paused' } },
      runs: {
        r1: { status: 'paused', owner: null, lease: { until: 'a' }, turnIds: ['t1', 't2'] },
        r9: { status: 'x' },
      },
    };
    const rebuilt = {
      'live-runs': { r1: { status: 'running' }, r2: { status: 'paused' } },
      runs: { r1: { status: 'running', owner: 'h', lease: { until: 'b' }, turnIds: ['t1', 't3'] } },
    };
    const diffs = diffProjection('runs', live, rebuilt);
    expect(diffs.map((d) => [d.collection, d.id, d.kind])).toEqual([
      ['live-runs', 'r1', 'missing'],
      ['runs', 'r1', 'changed'],
      ['runs', 'r9', 'extra'],
    ]);
    expect(diffs[1]!.fields).toEqual([
      { path: 'lease.until', live: 'a', rebuilt: 'b' },
      { path: 'owner', live: null, rebuilt: 'h' },
      { path: 'status', live: 'paused', rebuilt: 'running' },
      { path: 'turnIds[1]', live: 't2', rebuilt: 't3' },
    ]);
    expect(describeDifference(diffs[1]!)).toBe(
      'runs runs/r1: differs from a rebuild: lease.until: live "a", rebuilt "b"; owner: live null, rebuilt "h"; status: live "paused", rebuilt "running"; turnIds[1]: live "t2", rebuilt "t3"',
    );
    expect(describeDifference(diffs[0]!)).toBe(
      'runs live-runs/r1: missing from the live projection (a rebuild has {"status":"running"})',
    );
    expect(describeDifference(diffs[2]!)).toBe(
      'runs runs/r9: in the live projection only ({"status":"x"}); a rebuild has none',
    );
  });

  it('compares arrays of another length, and non-object documents, as a whole', () => {
    expect(diffValues({ a: [1] }, { a: [1, 2] })).toEqual([{ path: 'a', live: [1], rebuilt: [1, 2] }]);
    expect(diffValues(3, 4)).toEqual([{ path: '(document)', live: 3, rebuilt: 4 }]);
  });
});
