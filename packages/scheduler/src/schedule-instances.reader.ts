import type { ProjectionSource } from '@demiurge/event-store';
import {
  ScheduleInstanceCollections as C,
  type ScheduleInstanceView,
  type ScheduleSummary,
  scheduleKey,
  slotKey,
} from './schedule-instance.view.js';
import { scheduleInstancesProjector } from './schedule-instances.projector.js';

/** The `schedule-instances` read model, typed. */
export interface ScheduleInstancesReader {
  /** One instance, or undefined. */
  get(instanceId: string): Promise<ScheduleInstanceView | undefined>;
  /** Every instance, in id order. */
  all(): Promise<ScheduleInstanceView[]>;
  /** The instances of one fire slot (core, schedule, due time), in creation order. */
  ofFire(coreId: string, scheduleId: string, dueAt: string): Promise<ScheduleInstanceView[]>;
  summary(coreId: string, scheduleId: string): Promise<ScheduleSummary | undefined>;
}

/**
 * The typed reader of the `schedule-instances` projection.
 * @example
 * const instance = await scheduleInstancesReader(store).get(instanceId);
 */
export function scheduleInstancesReader(store: ProjectionSource): ScheduleInstancesReader {
  const reader = store.projection(scheduleInstancesProjector.name);
  const get = (instanceId: string) => reader.get<ScheduleInstanceView>(C.instances, instanceId);
  return {
    get,
    all: () => reader.list<ScheduleInstanceView>(C.instances),
    async ofFire(coreId, scheduleId, dueAt) {
      const refs = await reader.list<{ instanceId: string }>(C.bySchedule, {
        prefix: `${slotKey(coreId, scheduleId, dueAt)}/`,
      });
      const views = await Promise.all(refs.map((r) => get(r.instanceId)));
      return views.filter((v): v is ScheduleInstanceView => v !== undefined);
    },
    summary: (coreId, scheduleId) => reader.get<ScheduleSummary>(C.schedules, scheduleKey(coreId, scheduleId)),
  };
}
