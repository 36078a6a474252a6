import { asDomainEvent, type RecordedEvent } from '@demiurge/contracts';
import { NONE } from '../define-lifecycle.js';
import {
  type ScheduleInstanceEventType,
  type ScheduleInstanceState,
  scheduleInstanceLifecycle,
} from '../machines/schedule-instance.machine.js';
import { nextState } from '../transitions.js';

/**
 * A schedule instance (one due fire) as its stream says: the machine's state plus the facts its events
 * carry. The one fold of an instance, used by the scheduler's commands (`InstanceLedger`, the fire's
 * settle) and its `schedule-instances` projector alike. What the stream does not carry (the definition
 * in the `scheduled` event's meta, the fire's work item and session) the projector adds from elsewhere.
 */
export interface ScheduleInstanceFacts {
  readonly status: ScheduleInstanceState;
  readonly instanceId: string | null;
  /** The `sch_` id the events name. */
  readonly scheduleId: string | null;
  readonly dueAt: string | null;
  /** The fire's task, from `schedule_instance.claimed` (a claimed instance keeps it). */
  readonly taskId: string | null;
  /** From `schedule_instance.failed`. */
  readonly error: { readonly code: string; readonly message: string } | null;
}

/** A schedule instance before its first event. */
export const initialScheduleInstanceFacts: ScheduleInstanceFacts = {
  status: NONE as ScheduleInstanceState,
  instanceId: null,
  scheduleId: null,
  dueAt: null,
  taskId: null,
  error: null,
};

/** The fields one accepted event sets. */
function changes(recorded: RecordedEvent): Partial<ScheduleInstanceFacts> {
  const event = asDomainEvent(recorded);
  switch (event.type) {
    case 'schedule_instance.scheduled': {
      const { scheduleInstanceId, scheduleId, dueAt } = event.data;
      return { instanceId: scheduleInstanceId, scheduleId, dueAt };
    }
    case 'schedule_instance.claimed':
      return { taskId: event.data.taskId ?? null };
    case 'schedule_instance.failed':
      return { error: event.data.error };
    default:
      return {};
  }
}

/**
 * The schedule-instance fold, strict: an event the machine refuses throws `IllegalTransitionError` naming
 * the instance (the command side loads with it: `loadAggregate(store, scheduleInstanceFold, instanceId)`).
 * @example
 * const instance = await loadAggregate(store, scheduleInstanceFold, instanceId); // instance.state.taskId
 */
export const scheduleInstanceFold = {
  streamType: scheduleInstanceLifecycle.streamType,
  initialState: initialScheduleInstanceFacts,
  evolve(instance: ScheduleInstanceFacts, event: RecordedEvent, streamId?: string): ScheduleInstanceFacts {
    const status = scheduleInstanceLifecycle.evolve(instance.status, event, streamId);
    return { ...instance, ...changes(event), status };
  },
};

/**
 * The schedule-instance fold, tolerant: `undefined` for an event the machine refuses (a read model skips it).
 * @example
 * evolveScheduleInstance(initialScheduleInstanceFacts, scheduled)?.status; // 'scheduled'
 */
export function evolveScheduleInstance(
  instance: ScheduleInstanceFacts,
  event: RecordedEvent,
): ScheduleInstanceFacts | undefined {
  const status = nextState(scheduleInstanceLifecycle, instance.status, {
    type: event.type as ScheduleInstanceEventType,
    data: event.data,
  });
  return status === undefined ? undefined : { ...instance, ...changes(event), status };
}
