import { Cron } from 'croner';

/** How far {@link CronSpec.count} enumerates before it stops counting. */
export const COUNT_CAP = 1000;

const HOUR = 3_600_000;
const UTC_ZONES = new Set(['UTC', 'Etc/UTC', 'Etc/GMT', 'GMT', 'Etc/Universal', 'Etc/Zulu']);

/**
 * A compiled cron expression in an IANA time zone: next and recent due times as epoch milliseconds.
 * Built on croner, plus wall-clock rules for daylight-saving changes, so that every wall-clock slot is
 * due at most once:
 * - a slot that does not exist (spring forward) is due once, at the time croner shifts it to;
 * - a slot that occurs twice (fall back) is due once, at its first occurrence (croner answers with
 *   the first in some zones and the second in others; both become the first).
 * The due times are a fixed set: enumerating from any instant gives the same times after it.
 *
 * @example
 * const spec = compileCron('30 1 * * *', 'America/New_York');
 * spec.nextAfter(Date.parse('2026-11-01T05:00:00Z')); // 05:30Z = 01:30 EDT; 01:30 EST is not due again
 */
export interface CronSpec {
  readonly pattern: string;
  readonly timezone: string;
  /** The first due time strictly after `after`, or null when the pattern never matches again. */
  nextAfter(after: number): number | null;
  /** The due times in (after, until], ascending, at most `max` of them (the earliest). */
  between(after: number, until: number, max?: number): number[];
  /** The latest `n` due times in (after, until], ascending. */
  latest(after: number, until: number, n: number): number[];
  /** How many due times lie in (after, until], counting up to {@link COUNT_CAP}. */
  count(after: number, until: number): number;
}

/** Splits a cron expression into its fields (5, or 6 with seconds first). */
export function cronFields(pattern: string): string[] {
  return pattern.trim().split(/\s+/);
}

/** The cron expression with its fields separated by one space (what the signature hashes). */
export function normalizeCron(pattern: string): string {
  return cronFields(pattern).join(' ');
}

/**
 * Compiles a cron expression; throws croner's error for an invalid pattern or time zone.
 * Use {@link cronProblem} to validate with a readable message instead.
 */
export function compileCron(pattern: string, timezone: string): CronSpec {
  const zone = UTC_ZONES.has(timezone) ? { utcOffset: 0 } : { timezone };
  const cron = new Cron(normalizeCron(pattern), { ...zone, paused: true });
  // A time whose wall clock reads the same an hour earlier is the second occurrence of a repeated
  // (fall-back) slot: the slot is due at its first occurrence.
  const firstOccurrence = (t: number) => (wallClock(t - HOUR, timezone) === wallClock(t, timezone) ? t - HOUR : t);
  const nextAfter = (after: number): number | null => {
    let probe = after;
    for (let i = 0; i < 10_000; i++) {
      const next = cron.nextRun(new Date(probe));
      if (next === null) return null;
      const t = next.getTime();
      const due = firstOccurrence(t);
      if (due > after) return due;
      // Past already: croner answered inside a repeated hour with a slot that occurred before `after`.
      probe = t > probe ? t : probe + 60_000;
    }
    throw new Error(`cron "${pattern}" (${timezone}): no next due time found after ${new Date(after).toISOString()}`);
  };
  const between = (after: number, until: number, max = Number.POSITIVE_INFINITY): number[] => {
    const out: number[] = [];
    for (let t = nextAfter(after); t !== null && t <= until && out.length < max; t = nextAfter(t)) out.push(t);
    return out;
  };
  return {
    pattern: normalizeCron(pattern),
    timezone,
    nextAfter,
    between,
    latest(after, until, n) {
      if (n <= 0 || until <= after) return [];
      // Widen a window back from `until` until it holds more than n due times (or reaches `after`).
      for (let window = 60_000; ; window *= 4) {
        const start = Math.max(after, until - window);
        const found = between(start, until);
        if (found.length > n || start === after) return found.slice(-n);
      }
    },
    count(after, until) {
      return between(after, until, COUNT_CAP).length;
    },
  };
}

/** Why a time zone is not usable, or undefined when it is a known IANA zone. */
export function timezoneProblem(timezone: string): string | undefined {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return undefined;
  } catch {
    return `unknown time zone "${timezone}" (use an IANA name such as Europe/Berlin or UTC)`;
  }
}

/**
 * Why a cron expression is not usable, or undefined when it is: it must have 5 fields (minute hour
 * day-of-month month day-of-week) or 6 (seconds first), parse, and match some time.
 */
export function cronProblem(pattern: string, timezone = 'UTC'): string | undefined {
  const fields = cronFields(pattern);
  if (fields.length !== 5 && fields.length !== 6) {
    return `expected 5 fields (minute hour day month weekday) or 6 (seconds first), got ${fields.length}`;
  }
  let spec: CronSpec;
  try {
    spec = compileCron(pattern, timezone);
  } catch (err) {
    return (err as Error).message.replace(/^CronPattern: /, '');
  }
  if (spec.nextAfter(Date.parse('2000-01-01T00:00:00Z')) === null) return `"${pattern}" never matches any date`;
  return undefined;
}

const wallClockFormats = new Map<string, Intl.DateTimeFormat>();

/**
 * The wall-clock time of an instant in a time zone, `YYYY-MM-DD HH:MM:SS` (24 h).
 * @example
 * wallClock(Date.parse('2026-03-08T07:00:00Z'), 'America/New_York'); // '2026-03-08 03:00:00'
 */
export function wallClock(ms: number, timezone: string): string {
  let format = wallClockFormats.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat('sv-SE', {
      timeZone: timezone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    wallClockFormats.set(timezone, format);
  }
  return format.format(new Date(ms));
}
