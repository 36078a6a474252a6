import type { MissedPolicy } from './schedule-file.js';

/** The due times a tick found, split by lateness. Times are ISO strings, ascending. */
export interface DueTimes {
  /** Due times found more than `missedAfterMs` late: at most the latest few (see {@link missedKeep}). */
  readonly missed: readonly string[];
  /** How many missed due times there are in all (at least `missed.length`). */
  readonly missedTotal: number;
  /** Due times found in time: they always fire. */
  readonly onTime: readonly string[];
}

/** What to do with them. */
export interface DuePlan {
  /** Due times that fire, oldest first. */
  readonly fire: readonly string[];
  /** Known missed due times that do not fire, oldest first (a subset when there were many). */
  readonly notFired: readonly string[];
  /** How many missed due times do not fire in all. */
  readonly notFiredTotal: number;
  /** Why they do not fire, for the instances recorded as missed. */
  readonly reason: string;
}

/** How many of the latest missed due times a tick needs to know for a policy (older ones are only counted). */
export function missedKeep(policy: MissedPolicy, catchUpLimit: number): number {
  return policy === 'catch_up' ? catchUpLimit : 1;
}

/**
 * Applies a missed-fire policy (pure). On-time due times always fire. Of the missed ones:
 * `coalesce` fires one, the latest, and only when nothing fires on time anyway; `skip` fires none;
 * `catch_up` fires the latest `catchUpLimit` of them, oldest first, and skips any older ones.
 *
 * @example
 * planDue('coalesce', 10, { missed: ['09:00', '10:00'], missedTotal: 2, onTime: [] });
 * // { fire: ['10:00'], notFired: ['09:00'], notFiredTotal: 1, reason: 'coalesced into the fire due at 10:00' }
 */
export function planDue(policy: MissedPolicy, catchUpLimit: number, due: DueTimes): DuePlan {
  const { missed, missedTotal, onTime } = due;
  if (policy === 'catch_up') {
    const caught = missed.slice(-catchUpLimit);
    const dropped = missed.slice(0, missed.length - caught.length);
    return {
      fire: [...caught, ...onTime],
      notFired: dropped,
      notFiredTotal: missedTotal - caught.length,
      reason: `beyond catch_up_limit ${catchUpLimit}: only the latest ${catchUpLimit} missed due times fire`,
    };
  }
  if (policy === 'skip' || missed.length === 0) {
    return {
      fire: [...onTime],
      notFired: [...missed],
      notFiredTotal: missedTotal,
      reason: 'missed: skip, so missed due times do not fire',
    };
  }
  const into = onTime[0] ?? missed[missed.length - 1]!;
  const notFired = onTime.length > 0 ? [...missed] : missed.slice(0, -1);
  return {
    fire: onTime.length > 0 ? [...onTime] : [into],
    notFired,
    notFiredTotal: onTime.length > 0 ? missedTotal : missedTotal - 1,
    reason: `missed: coalesce, so it was coalesced into the fire due at ${into}`,
  };
}
