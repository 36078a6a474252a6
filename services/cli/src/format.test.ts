import { describe, expect, it } from 'vitest';
import { counts, describeLease, relativeTime, table } from './format.js';

describe('text formatting', () => {
  it('lays rows out in columns under upper-case headings, the last column unpadded', () => {
    const rows = [
      { id: 'run_1', status: 'running', note: 'a\nb' },
      { id: 'run_22', status: 'paused', note: '' },
    ];
    expect(
      table(rows, [
        { heading: 'run', cell: (r) => r.id },
        { heading: 'status', cell: (r) => r.status },
        { heading: 'note', cell: (r) => r.note },
      ]),
    ).toEqual(['RUN     STATUS   NOTE', 'run_1   running  a b', 'run_22  paused']);
  });

  it('says how far a lease is from now, and when it expired', () => {
    const now = Date.parse('2030-01-01T00:00:00.000Z');
    expect(describeLease('2030-01-01T00:00:25.000Z', now)).toBe('until 2030-01-01T00:00:25.000Z (in 25s)');
    expect(describeLease('2029-12-31T23:57:00.000Z', now)).toBe('expired 3m ago');
    expect(describeLease(null, now)).toBe('none');
    expect(relativeTime('2030-01-03T00:00:00.000Z', now)).toBe('in 2d');
    expect(counts({ queued: 2, active: 1 })).toBe('active 1, queued 2');
    expect(counts({})).toBe('none');
  });
});
