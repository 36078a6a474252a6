import { propertySettings } from '@demiurge/contracts/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileCron, cronProblem, timezoneProblem, wallClock } from './cron-spec.js';

const at = (iso: string) => Date.parse(iso);
const isoOf = (ms: number) => new Date(ms).toISOString();
const run = (pattern: string, tz: string, from: string, until: string) =>
  compileCron(pattern, tz)
    .between(at(from), at(until))
    .map((t) => `${isoOf(t)} ${wallClock(t, tz)}`);

describe('compileCron: daylight-saving changes (2026)', () => {
  it('spring forward: a slot that does not exist is due once, shifted to the next valid time', () => {
    expect(run('0 2 * * *', 'America/New_York', '2026-03-06T12:00:00Z', '2026-03-10T12:00:00Z')).toEqual([
      '2026-03-07T07:00:00.000Z 2026-03-07 02:00:00',
      '2026-03-08T07:00:00.000Z 2026-03-08 03:00:00',
      '2026-03-09T06:00:00.000Z 2026-03-09 02:00:00',
      '2026-03-10T06:00:00.000Z 2026-03-10 02:00:00',
    ]);
    expect(run('30 2 * * *', 'Europe/Berlin', '2026-03-27T12:00:00Z', '2026-03-31T12:00:00Z')).toEqual([
      '2026-03-28T01:30:00.000Z 2026-03-28 02:30:00',
      '2026-03-29T01:30:00.000Z 2026-03-29 03:30:00',
      '2026-03-30T00:30:00.000Z 2026-03-30 02:30:00',
      '2026-03-31T00:30:00.000Z 2026-03-31 02:30:00',
    ]);
  });

  it('fall back: a slot that occurs twice is due once, at its first occurrence, in both hemispheres of UTC', () => {
    expect(run('30 1 * * *', 'America/New_York', '2026-10-30T12:00:00Z', '2026-11-03T12:00:00Z')).toEqual([
      '2026-10-31T05:30:00.000Z 2026-10-31 01:30:00',
      '2026-11-01T05:30:00.000Z 2026-11-01 01:30:00',
      '2026-11-02T06:30:00.000Z 2026-11-02 01:30:00',
      '2026-11-03T06:30:00.000Z 2026-11-03 01:30:00',
    ]);
    // croner itself answers 01:30Z (02:30 CET, the second occurrence) here; the slot is due at 00:30Z.
    expect(run('30 2 * * *', 'Europe/Berlin', '2026-10-23T12:00:00Z', '2026-10-27T12:00:00Z')).toEqual([
      '2026-10-24T00:30:00.000Z 2026-10-24 02:30:00',
      '2026-10-25T00:30:00.000Z 2026-10-25 02:30:00',
      '2026-10-26T01:30:00.000Z 2026-10-26 02:30:00',
      '2026-10-27T01:30:00.000Z 2026-10-27 02:30:00',
    ]);
  });

  it('never answers with a time before the one asked about (croner does, inside the repeated hour)', () => {
    const spec = compileCron('30 1 * * *', 'America/New_York');
    // 06:00Z is 01:00 EST, the second 1 o'clock: 01:30 EST is the second occurrence of a slot already past.
    expect(isoOf(spec.nextAfter(at('2026-11-01T06:00:00Z'))!)).toBe('2026-11-02T06:30:00.000Z');
    const quarter = compileCron('*/15 * * * *', 'America/New_York');
    expect(isoOf(quarter.nextAfter(at('2026-11-01T06:00:00Z'))!)).toBe('2026-11-01T07:00:00.000Z');
  });

  it('is one fixed set of due times: from any instant, strictly later, each wall-clock slot once', () => {
    const zones = ['America/New_York', 'Europe/Berlin', 'Australia/Sydney', 'UTC'];
    const patterns = ['0 2 * * *', '30 1 * * *', '30 2 * * *', '*/20 * * * *', '0 */3 * * *', '15 1,2,3 * * *'];
    // The 2026 transitions of these zones (UTC instants): starts fall within a day and a half before one.
    const transitions = ['03-08T07', '11-01T06', '03-29T01', '10-25T01', '04-05T16', '10-03T16'].map((t) =>
      at(`2026-${t}:00:00Z`),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.constantFrom(...patterns),
        fc.constantFrom(...transitions),
        fc.integer({ min: 0, max: 36 * 3_600_000 }),
        fc.integer({ min: 1, max: 6 * 3_600_000 }),
        (tz, pattern, transition, before, offset) => {
          const spec = compileCron(pattern, tz);
          const start = transition - before;
          const until = start + 40 * 3_600_000;
          const from = spec.between(start, until);
          const later = spec.between(start + offset, until);
          expect(later).toEqual(from.filter((t) => t > start + offset));
          const labels = from.map((t) => wallClock(t, tz));
          expect(new Set(labels).size).toBe(labels.length);
          expect([...labels].sort()).toEqual(labels);
          for (const t of from) expect(t).toBeGreaterThan(start);
        },
      ),
      propertySettings(40),
    );
  });

  it('finds the latest due times of a long gap without walking all of it', () => {
    const everySecond = compileCron('* * * * * *', 'UTC');
    const until = at('2026-05-01T09:00:00Z');
    expect(everySecond.latest(until - 365 * 86_400_000, until, 3).map(isoOf)).toEqual([
      '2026-05-01T08:59:58.000Z',
      '2026-05-01T08:59:59.000Z',
      '2026-05-01T09:00:00.000Z',
    ]);
    expect(everySecond.count(until - 365 * 86_400_000, until)).toBe(1000);
    const daily = compileCron('0 9 * * *', 'Europe/Berlin');
    expect(daily.latest(at('2026-04-01T00:00:00Z'), until, 2).map(isoOf)).toEqual([
      '2026-04-30T07:00:00.000Z',
      '2026-05-01T07:00:00.000Z',
    ]);
    expect(daily.count(at('2026-04-01T00:00:00Z'), until)).toBe(31);
  });
});

describe('validation', () => {
  it('accepts 5 and 6 fields and explains what is wrong with the others', () => {
    expect(cronProblem('0 9 * * 1-5')).toBeUndefined();
    expect(cronProblem('*/10 * * * * *')).toBeUndefined();
    expect(cronProblem('@daily')).toMatch(/expected 5 fields .* got 1/);
    expect(cronProblem('* * * * * * *')).toMatch(/got 7/);
    expect(cronProblem('61 * * * *')).toBe('Invalid value for minute: 61');
    expect(cronProblem('0 0 30 2 *')).toBe('"0 0 30 2 *" never matches any date');
  });

  it('knows IANA time zones', () => {
    expect(timezoneProblem('Europe/Berlin')).toBeUndefined();
    expect(timezoneProblem('UTC')).toBeUndefined();
    expect(timezoneProblem('Mars/Olympus_Mons')).toMatch(/unknown time zone "Mars\/Olympus_Mons"/);
  });
});
