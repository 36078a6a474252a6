import {
  asDomainEvent,
  type EventOfType,
  isEvent,
  type RecordedEvent,
  scheduleInstanceEvents,
} from '@demiurge/contracts';
import { defineProjector, type ProjectionTx } from '@demiurge/event-store';
import {
  allowedEvents,
  NONE,
  nextState,
  type ScheduleInstanceEventType,
  type ScheduleInstanceState,
  scheduleInstanceLifecycle,
} from '@demiurge/lifecycle';
import { wallClock } from './cron-spec.js';
import {
  ScheduleInstanceCollections as C,
  instanceKey,
  ScheduleInstanceMeta,
  type ScheduleInstanceStatus,
  type ScheduleInstanceView,
  type ScheduleSummary,
  scheduleKey,
  slotKey,
} from './schedule-instance.view.js';

const FIRE_KIND = 'schedule.fire';

const instanceTypes = scheduleInstanceEvents.map((e) => e.type);

function created(event: EventOfType<'schedule_instance.scheduled'>): ScheduleInstanceView {
  const d = event.data;
  const meta = ScheduleInstanceMeta.safeParse(event.meta.schedule);
  const m = meta.success ? meta.data : null;
  return {
    instanceId: d.scheduleInstanceId,
    scheduleEventId: d.scheduleId,
    coreId: m?.coreId ?? null,
    scheduleId: m?.scheduleId ?? null,
    signature: m?.signature ?? null,
    definition: m ? { cron: m.cron, timezone: m.timezone, prompt: m.prompt, delivery: m.delivery } : null,
    dueAt: d.dueAt,
    dueLocal: m ? wallClock(Date.parse(d.dueAt), m.timezone) : null,
    status: 'scheduled',
    workId: null,
    taskId: null,
    sessionId: null,
    error: null,
    scheduledAt: event.recordedAt,
    updatedAt: event.recordedAt,
    position: event.position,
    version: event.streamVersion,
    allowed: allowedEvents(scheduleInstanceLifecycle, 'scheduled'),
  };
}

function changes(recorded: RecordedEvent): Partial<ScheduleInstanceView> {
  const event = asDomainEvent(recorded);
  if (event.type === 'schedule_instance.claimed') {
    return { taskId: event.data.taskId ?? null };
  }
  if (event.type === 'schedule_instance.failed') {
    return { error: event.data.error };
  }
  return {};
}

function evolve(
  view: ScheduleInstanceView,
  event: RecordedEvent,
  status: ScheduleInstanceStatus,
): ScheduleInstanceView {
  return {
    ...view,
    ...changes(event),
    status,
    updatedAt: event.recordedAt,
    version: event.streamVersion,
    allowed: allowedEvents(scheduleInstanceLifecycle, status),
  };
}

/** Keeps the view, its `by-schedule` entry and the schedule summary in step. */
function write(tx: ProjectionTx, view: ScheduleInstanceView, isNew: boolean): void {
  tx.put(C.instances, view.instanceId, view);
  if (view.taskId) tx.put(C.byTask, view.taskId, { instanceId: view.instanceId });
  if (view.coreId === null || view.scheduleId === null || view.signature === null) return;
  const key = scheduleKey(view.coreId, view.scheduleId);
  if (isNew) {
    const ref = { instanceId: view.instanceId };
    tx.put(C.bySchedule, instanceKey(view.coreId, view.scheduleId, view.dueAt, view.instanceId), ref);
  }
  const before = tx.get<ScheduleSummary>(C.schedules, key);
  const open = { ...(before?.open ?? {}) };
  if (view.status === 'scheduled') {
    open[view.instanceId] = {
      instanceId: view.instanceId,
      dueAt: view.dueAt,
      signature: view.signature,
      workId: view.workId,
    };
  } else {
    delete open[view.instanceId];
  }
  const cursors = { ...(before?.cursors ?? {}) };
  const cursor = cursors[view.signature];
  if (cursor === undefined || cursor < view.dueAt) cursors[view.signature] = view.dueAt;
  const latest =
    isNew || !before || before.latest.instanceId === view.instanceId
      ? {
          instanceId: view.instanceId,
          signature: view.signature,
          status: view.status,
          errorCode: view.error?.code ?? null,
        }
      : before.latest;
  const summary: ScheduleSummary = { coreId: view.coreId, scheduleId: view.scheduleId, latest, cursors, open };
  tx.put(C.schedules, key, summary);
}

function applyInstanceEvent(event: RecordedEvent, tx: ProjectionTx): void {
  if (!isEvent(event, ...instanceTypes)) return;
  const { scheduleInstanceId } = event.data;
  const view = tx.get<ScheduleInstanceView>(C.instances, scheduleInstanceId);
  const from: ScheduleInstanceState = view?.status ?? NONE;
  const to = nextState(scheduleInstanceLifecycle, from, {
    type: event.type as ScheduleInstanceEventType,
    data: event.data,
  });
  if (to === undefined || to === NONE) return;
  // An instance never inherits a work item enqueued before it: that fire belongs to another instance.
  if (!view) {
    if (isEvent(event, 'schedule_instance.scheduled')) write(tx, created(event), true);
  } else write(tx, evolve(view, event, to), false);
}

/** A `schedule.fire` work item: remembered for its slot, and given to the slot's waiting instances. */
function applyWorkEnqueued(event: EventOfType<'work.enqueued'>, tx: ProjectionTx): void {
  const d = event.data;
  if (d.kind !== FIRE_KIND) return;
  const p = d.payload;
  if (typeof p !== 'object' || p === null || Array.isArray(p)) return;
  if (typeof p.coreId !== 'string' || typeof p.scheduleId !== 'string' || typeof p.dueAt !== 'string') return;
  const slot = slotKey(p.coreId, p.scheduleId, p.dueAt);
  tx.put(C.fires, slot, { workId: d.workId });
  for (const { instanceId } of tx.list<{ instanceId: string }>(C.bySchedule, { prefix: `${slot}/` })) {
    const view = tx.get<ScheduleInstanceView>(C.instances, instanceId);
    if (view && view.status === 'scheduled' && view.workId === null) write(tx, { ...view, workId: d.workId }, false);
  }
}

/** A `schedule.fire` task: its session is the instance's session. */
function applyTaskSubmitted(event: EventOfType<'task.submitted'>, tx: ProjectionTx): void {
  const d = event.data;
  if (d.kind !== FIRE_KIND) return;
  const ref = tx.get<{ instanceId: string }>(C.byTask, d.taskId);
  const view = ref && tx.get<ScheduleInstanceView>(C.instances, ref.instanceId);
  if (view) tx.put(C.instances, view.instanceId, { ...view, sessionId: d.sessionId });
}

/**
 * The scheduler's read model (seed 003 `scheduler_instances`): every schedule instance with the
 * definition it was created under, each schedule's instances by due time, a per-schedule summary
 * for `tick()`, the `schedule.fire` work item of each fire slot, and the session of each fire's task.
 * Statuses come from the schedule-instance machine; a refused event changes nothing.
 */
export const scheduleInstancesProjector = defineProjector({
  name: 'schedule-instances',
  version: 1,
  handles: [...scheduleInstanceEvents.map((e) => e.type), 'work.enqueued', 'task.submitted'],
  apply(event, tx) {
    if (isEvent(event, 'work.enqueued')) applyWorkEnqueued(event, tx);
    else if (isEvent(event, 'task.submitted')) applyTaskSubmitted(event, tx);
    else applyInstanceEvent(event, tx);
  },
});
