import type { NewEvent, RecordedEvent } from '@demiurge/contracts';
import {
  checkEvents,
  initialScheduleInstanceFacts,
  type ScheduleInstanceEventType,
  type ScheduleInstanceFacts,
  scheduleInstanceFold,
  scheduleInstanceLifecycle,
} from '@demiurge/lifecycle';

type InstanceErrorData = { readonly code: string; readonly message: string };

/** What the scheduler asks of one schedule instance (one due fire). */
export type ScheduleInstanceCommand =
  /** A schedule is due at `dueAt`: a new instance (`scheduleId` is the `sch_` id of the events). */
  | { readonly kind: 'schedule'; readonly instanceId: string; readonly scheduleId: string; readonly dueAt: string }
  /** Claim a scheduled instance for its fire, with the fire's task. An instance no longer scheduled is left as it is. */
  | { readonly kind: 'claim'; readonly instanceId: string; readonly taskId: string }
  /** Retire a scheduled instance that will not fire (a duplicate, a missed time). One that moved on is left as it is. */
  | { readonly kind: 'retire'; readonly instanceId: string; readonly error: InstanceErrorData }
  /** The claimed instance's fire finished. */
  | { readonly kind: 'complete'; readonly instanceId: string }
  /** The instance's fire failed (or gave up). */
  | { readonly kind: 'fail'; readonly instanceId: string; readonly error: InstanceErrorData };

/** The events a command proposes, before the machine checks them. */
function propose(command: ScheduleInstanceCommand, instance: ScheduleInstanceFacts) {
  const scheduleInstanceId = command.instanceId;
  const events: NewEvent<ScheduleInstanceEventType>[] = [];
  switch (command.kind) {
    case 'schedule':
      events.push({
        type: 'schedule_instance.scheduled',
        data: { scheduleInstanceId, scheduleId: command.scheduleId, dueAt: command.dueAt },
      });
      break;
    case 'claim':
      if (instance.status === 'scheduled') {
        events.push({ type: 'schedule_instance.claimed', data: { scheduleInstanceId, taskId: command.taskId } });
      }
      break;
    case 'retire':
      if (instance.status === 'scheduled') {
        events.push({ type: 'schedule_instance.failed', data: { scheduleInstanceId, error: command.error } });
      }
      break;
    case 'complete':
      events.push({ type: 'schedule_instance.completed', data: { scheduleInstanceId } });
      break;
    case 'fail':
      events.push({ type: 'schedule_instance.failed', data: { scheduleInstanceId, error: command.error } });
      break;
  }
  return events;
}

/**
 * Decides a schedule-instance command from the instance's facts (its fold, `scheduleInstanceFold`): the
 * events to append, machine-checked. `claim` and `retire` of an instance that is no longer `scheduled`
 * append nothing (the caller reads what became of it); anything the machine refuses (completing an
 * unclaimed instance, scheduling one twice, failing a final one) throws `IllegalTransitionError`.
 * @example
 * decideScheduleInstance({ kind: 'claim', instanceId, taskId }, scheduled); // [schedule_instance.claimed]
 */
export function decideScheduleInstance(
  command: ScheduleInstanceCommand,
  instance: ScheduleInstanceFacts,
): NewEvent<ScheduleInstanceEventType>[] {
  return checkEvents(scheduleInstanceLifecycle, instance.status, propose(command, instance), command.instanceId);
}

/** The schedule instance as an Emmett-style decider: `decideScheduleInstance` over the strict fold. */
export const scheduleInstanceDecider = {
  initialState: initialScheduleInstanceFacts,
  decide: decideScheduleInstance,
  evolve: (instance: ScheduleInstanceFacts, event: RecordedEvent): ScheduleInstanceFacts =>
    scheduleInstanceFold.evolve(instance, event),
};
