import type { ScheduleInstanceEventType, ScheduleInstanceState } from '@demiurge/lifecycle';
import { z } from 'zod';

/** An instance's status: a state of the schedule-instance machine except `none`. */
export type ScheduleInstanceStatus = Exclude<ScheduleInstanceState, 'none'>;

/**
 * What `schedule_instance.scheduled` carries in its meta under `schedule`: the schedule (core + file id)
 * and the definition the instance was created under. The contract's event data has only the `sch_` id
 * and the due time, so the scheduler keeps these here (meta keeps unknown keys).
 */
export const ScheduleInstanceMeta = z.object({
  coreId: z.string().min(1),
  scheduleId: z.string().min(1),
  signature: z.string().min(1),
  cron: z.string().min(1),
  timezone: z.string().min(1),
  prompt: z.string().min(1),
  delivery: z.object({ channel: z.string().min(1), conversation_key: z.string().min(1).optional() }).nullable(),
});
export type ScheduleInstanceMeta = z.infer<typeof ScheduleInstanceMeta>;

/** One due fire of a schedule, as `history()` and the operator read it. */
export interface ScheduleInstanceView {
  readonly instanceId: string;
  /** The `sch_` id of the events. */
  readonly scheduleEventId: string;
  /** Core and schedule (file) id; null when the instance was recorded without scheduler meta. */
  readonly coreId: string | null;
  readonly scheduleId: string | null;
  readonly signature: string | null;
  /** The definition it was created under (kept after the file changes). */
  readonly definition: Omit<ScheduleInstanceMeta, 'coreId' | 'scheduleId' | 'signature'> | null;
  readonly dueAt: string;
  /** `dueAt` on the schedule's wall clock, `YYYY-MM-DD HH:MM:SS`. */
  readonly dueLocal: string | null;
  readonly status: ScheduleInstanceStatus;
  /** The `schedule.fire` work item, once the due time was handed to durable work. */
  readonly workId: string | null;
  readonly taskId: string | null;
  readonly sessionId: string | null;
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly scheduledAt: string;
  readonly updatedAt: string;
  /** The log position of `schedule_instance.scheduled`: creation order. */
  readonly position: number;
  readonly version: number;
  /** What the machine accepts now. */
  readonly allowed: readonly ScheduleInstanceEventType[];
}

/** An instance that is still `scheduled` (not claimed, not final), as the schedule summary lists it. */
export interface OpenInstance {
  readonly instanceId: string;
  readonly dueAt: string;
  readonly signature: string;
  readonly workId: string | null;
}

/** Per (core, schedule): what a tick needs without reading the whole history. */
export interface ScheduleSummary {
  readonly coreId: string;
  readonly scheduleId: string;
  /** The last instance created (by log position): which signature is active, and whether it was retired. */
  readonly latest: {
    readonly instanceId: string;
    readonly signature: string;
    readonly status: ScheduleInstanceStatus;
    readonly errorCode: string | null;
  };
  /** Per signature, the latest due time any of its instances has: where its next due times start. */
  readonly cursors: Readonly<Record<string, string>>;
  /** Instances still `scheduled`, by id. */
  readonly open: Readonly<Record<string, OpenInstance>>;
}

/** Collections of the `schedule-instances` projector. */
export const ScheduleInstanceCollections = {
  /** id = instanceId → {@link ScheduleInstanceView} */
  instances: 'instances',
  /** id = {@link instanceKey} → `{ instanceId }`: a schedule's instances by due time */
  bySchedule: 'by-schedule',
  /** id = {@link scheduleKey} → {@link ScheduleSummary} */
  schedules: 'schedules',
  /** id = {@link slotKey} → `{ workId }`: the `schedule.fire` work item of (core, schedule, due time) */
  fires: 'fires',
  /** id = taskId → `{ instanceId }` */
  byTask: 'by-task',
} as const;

/** `<core>/<schedule>`, the core URI-encoded so that it holds no `/`. */
export const scheduleKey = (coreId: string, scheduleId: string): string =>
  `${encodeURIComponent(coreId)}/${scheduleId}`;

/** `<core>/<schedule>/<dueAt>`: one fire slot. */
export const slotKey = (coreId: string, scheduleId: string, dueAt: string): string =>
  `${scheduleKey(coreId, scheduleId)}/${dueAt}`;

/** The `by-schedule` id: listing a schedule's prefix lists its instances in due-time order. */
export const instanceKey = (coreId: string, scheduleId: string, dueAt: string, instanceId: string): string =>
  `${slotKey(coreId, scheduleId, dueAt)}/${instanceId}`;
