import type { EventStore } from '@demiurge/event-store';
import { compileCron, loadSchedules, scheduleInstancesReader, wallClock } from '@demiurge/scheduler';

/** One schedule as the operator status shows it: its next fires and its latest past instances. */
export interface ScheduleOverview {
  readonly scheduleId: string;
  readonly cron: string;
  readonly timezone: string;
  readonly enabled: boolean;
  readonly upcoming: readonly { dueAt: string; local: string }[];
  readonly past: readonly { dueAt: string; status: string; taskId: string | null }[];
}

/**
 * The schedules of a core for the operator status: the next `upcoming` fire times from its schedule files
 * (by the cron and time zone, from `now`) and the latest `past` instances from the log's read model.
 * Invalid schedule files are listed as errors, the others still shown.
 */
export async function scheduleOverview(
  store: EventStore,
  coreDir: string,
  now: number,
  options: { upcoming?: number; past?: number } = {},
): Promise<{ schedules: ScheduleOverview[]; errors: string[] }> {
  const { schedules, errors } = await loadSchedules(coreDir);
  const instances = await scheduleInstancesReader(store).all();
  return {
    errors: errors.map((e) => e.message),
    schedules: schedules.map((s) => ({
      scheduleId: s.id,
      cron: s.cron,
      timezone: s.timezone,
      enabled: s.enabled,
      upcoming: s.enabled
        ? compileCron(s.cron, s.timezone)
            .between(now, Number.POSITIVE_INFINITY, options.upcoming ?? 3)
            .map((t) => ({ dueAt: new Date(t).toISOString(), local: wallClock(t, s.timezone) }))
        : [],
      past: instances
        .filter((i) => i.scheduleId === s.id && i.status !== 'scheduled')
        .sort((a, b) => a.dueAt.localeCompare(b.dueAt))
        .slice(-(options.past ?? 5))
        .map((i) => ({ dueAt: i.dueAt, status: i.status, taskId: i.taskId })),
    })),
  };
}
