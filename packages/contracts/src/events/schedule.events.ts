import { z } from 'zod';
import { IdPrefix, prefixedId, TaskId } from '../ids.js';
import { defineEvent } from '../registry.js';

export const ScheduleId = prefixedId(IdPrefix.schedule);
export type ScheduleId = z.infer<typeof ScheduleId>;
export const ScheduleInstanceId = prefixedId(IdPrefix.scheduleInstance);
export type ScheduleInstanceId = z.infer<typeof ScheduleInstanceId>;

const failure = z.object({ code: z.string().min(1), message: z.string().min(1) });

export const ScheduleInstanceScheduled = defineEvent({
  type: 'schedule_instance.scheduled',
  schemaVersion: 1,
  description: 'A schedule produced a due instance (one fire) at `dueAt`.',
  data: () => z.object({ scheduleInstanceId: ScheduleInstanceId, scheduleId: ScheduleId, dueAt: z.iso.datetime() }),
});

export const ScheduleInstanceClaimed = defineEvent({
  type: 'schedule_instance.claimed',
  schemaVersion: 1,
  description: 'The scheduler claimed the due instance and submitted its fire as a task.',
  data: () => z.object({ scheduleInstanceId: ScheduleInstanceId, taskId: TaskId.optional() }),
});

export const ScheduleInstanceCompleted = defineEvent({
  type: 'schedule_instance.completed',
  schemaVersion: 1,
  description: "The instance's fire finished.",
  data: () => z.object({ scheduleInstanceId: ScheduleInstanceId }),
});

export const ScheduleInstanceFailed = defineEvent({
  type: 'schedule_instance.failed',
  schemaVersion: 1,
  description: 'The instance could not fire, or its fire failed; it is in error.',
  data: () => z.object({ scheduleInstanceId: ScheduleInstanceId, error: failure }),
});

export const scheduleInstanceEvents = [
  ScheduleInstanceScheduled,
  ScheduleInstanceClaimed,
  ScheduleInstanceCompleted,
  ScheduleInstanceFailed,
] as const;
