import { type EventOfType, isEvent, type RecordedEvent, scheduleInstanceEvents } from '@demiurge/contracts';
import { defineProjector, type ProjectionTx } from '@demiurge/event-store';
import {
  allowedEvents,
  evolveScheduleInstance,
  initialScheduleInstanceFacts,
  type ScheduleInstanceFacts,
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

/** The fold's facts of a stored view (the view keeps every fact the fold reads back). */
function factsOf(view: ScheduleInstanceView): ScheduleInstanceFacts {
  return {
    status: view.status,
    instanceId: view.instanceId,
    scheduleId: view.scheduleEventId,
    dueAt: view.dueAt,
    taskId: view.taskId,
    error: view.error,
  };
}

/** A new view: the instance's facts, and the definition the `scheduled` event's meta carries. */
function created(
  event: EventOfType<'schedule_instance.scheduled'>,
  facts: ScheduleInstanceFacts,
): ScheduleInstanceView {
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
    taskId: facts.taskId,
    sessionId: null,
    error: facts.error,
    scheduledAt: event.recordedAt,
    updatedAt: event.recordedAt,
    position: event.position,
    version: event.streamVersion,
    allowed: allowedEvents(scheduleInstanceLifecycle, 'scheduled'),
  };
}

/** The view after the fold (`evolveScheduleInstance`, the same fold the scheduler's commands load with). */
function evolved(
  view: ScheduleInstanceView,
  facts: ScheduleInstanceFacts,
  event: RecordedEvent,
  status: ScheduleInstanceStatus,
): ScheduleInstanceView {
  return {
    ...view,
    taskId: facts.taskId,
    error: facts.error,
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
  const facts = evolveScheduleInstance(view ? factsOf(view) : initialScheduleInstanceFacts, event);
  if (facts === undefined || facts.status === 'none') return;
  // An instance never inherits a work item enqueued before it: that fire belongs to another instance.
  if (!view) {
    if (isEvent(event, 'schedule_instance.scheduled')) write(tx, created(event, facts), true);
  } else write(tx, evolved(view, facts, event, facts.status), false);
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
 * Statuses and facts come from the schedule-instance fold (`evolveScheduleInstance` in
 * `@demiurge/lifecycle`); an event it refuses changes nothing.
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
