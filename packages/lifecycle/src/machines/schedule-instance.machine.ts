import { scheduleInstanceEvents } from '@demiurge/contracts';
import { defineLifecycle, type LifecycleEvent, type StateOf } from '../define-lifecycle.js';
import { lazySetup } from '../lazy-machine.js';

/** The event types the ScheduleInstance machine handles, e.g. for a typed `NewEvent<ScheduleInstanceEventType>`. */
export type ScheduleInstanceEventType = (typeof scheduleInstanceEvents)[number]['type'];

/** The schedule instance lifecycle: one due fire of a schedule. */
export const scheduleInstanceMachine = lazySetup({
  types: { events: {} as LifecycleEvent<ScheduleInstanceEventType> },
}).createMachine({
  id: 'schedule_instance',
  initial: 'none',
  states: {
    none: { description: 'No instance yet.', on: { 'schedule_instance.scheduled': 'scheduled' } },
    scheduled: {
      description: 'Due at dueAt, not yet claimed.',
      on: { 'schedule_instance.claimed': 'claimed', 'schedule_instance.failed': 'error' },
    },
    claimed: {
      description: 'Claimed by the scheduler; its fire was submitted.',
      on: { 'schedule_instance.completed': 'completed', 'schedule_instance.failed': 'error' },
    },
    completed: { description: 'The fire finished; final.' },
    error: { description: 'Could not fire, or the fire failed; final.' },
  },
});

/** The states of a ScheduleInstance machine, `none` included. */
export type ScheduleInstanceState = StateOf<typeof scheduleInstanceMachine>;

/** The schedule instance lifecycle: {@link scheduleInstanceMachine} with its vocabulary and invariants. */
export const scheduleInstanceLifecycle = defineLifecycle({
  aggregate: 'schedule instance',
  streamType: 'schedule_instance',
  title: 'Schedule instance',
  summary: 'One due fire of a schedule, recorded by SchedulerRuntime; the fire itself runs as a schedule.fire task.',
  invariants: ['An instance fires at most once: it is claimed once, then completed or in error.'],
  machine: scheduleInstanceMachine,
  vocabulary: scheduleInstanceEvents,
});
