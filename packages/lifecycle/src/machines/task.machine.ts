import { taskEvents } from '@demiurge/contracts';
import { defineLifecycle, type LifecycleEvent, type StateOf } from '../define-lifecycle.js';
import { lazySetup } from '../lazy-machine.js';

/** The event types the Task machine handles, e.g. for a typed `NewEvent<TaskEventType>`. */
export type TaskEventType = (typeof taskEvents)[number]['type'];

/**
 * The task lifecycle (seed 000 "Tasks"): the seed's paths
 * created → active → completed → archived; active ↔ blocked; active ↔ waiting;
 * active → cancelled → deleted; cancelled → archived; deleted → archived; cancel before start;
 * active → failed → archived. A waiting or blocked task can also be cancelled (an operator, or a
 * cancelled parent run, must be able to stop it) or failed (its host died while it waited).
 * `task.log` and the notices do not move the task: a finished task's completion notice, or a blocked task's
 * notice (it needs the user), which may be acknowledged after the task resumed.
 */
export const taskMachine = lazySetup({
  types: { events: {} as LifecycleEvent<TaskEventType> },
}).createMachine({
  id: 'task',
  initial: 'none',
  states: {
    none: {
      description: 'No task yet.',
      on: { 'task.submitted': 'created' },
    },
    created: {
      description: 'Submitted, not started (queued).',
      on: { 'task.started': 'active', 'task.cancelled': 'cancelled', 'task.log': 'created' },
    },
    active: {
      description: 'A worker is running it.',
      on: {
        'task.waiting': 'waiting',
        'task.blocked': 'blocked',
        'task.completed': 'completed',
        'task.failed': 'failed',
        'task.cancelled': 'cancelled',
        'task.log': 'active',
        'task.process_started': 'active',
        'task.artifact_recorded': 'active',
        'task.completion_acknowledged': 'active',
      },
    },
    waiting: {
      description: 'Waiting on input, a child task or a timer; resumes by itself.',
      on: {
        'task.resumed': 'active',
        'task.cancelled': 'cancelled',
        'task.failed': 'failed',
        'task.log': 'waiting',
        'task.completion_acknowledged': 'waiting',
      },
    },
    blocked: {
      description: 'Blocked; `resumable` on task.blocked says whether it can continue.',
      on: {
        'task.resumed': 'active',
        'task.cancelled': 'cancelled',
        'task.failed': 'failed',
        'task.log': 'blocked',
        'task.completion_ready': 'blocked',
        'task.completion_acknowledged': 'blocked',
      },
    },
    completed: {
      description: 'Finished successfully.',
      on: {
        'task.archived': 'archived',
        'task.completion_ready': 'completed',
        'task.completion_acknowledged': 'completed',
      },
    },
    failed: {
      description: 'Ended with an error.',
      on: {
        'task.archived': 'archived',
        'task.completion_ready': 'failed',
        'task.completion_acknowledged': 'failed',
      },
    },
    cancelled: {
      description: 'Cancelled; off the active board, the reason kept.',
      on: {
        'task.deleted': 'deleted',
        'task.archived': 'archived',
        'task.completion_ready': 'cancelled',
        'task.completion_acknowledged': 'cancelled',
      },
    },
    deleted: {
      description: 'Hidden from every active projection; kept for audit. Only archiving leaves it.',
      on: { 'task.archived': 'archived' },
    },
    archived: {
      description: 'Archived; final.',
    },
  },
});

/** The states of a Task machine, `none` included. */
export type TaskState = StateOf<typeof taskMachine>;

/** The task lifecycle: {@link taskMachine} with its vocabulary, invariants and idempotent repeats. */
export const taskLifecycle = defineLifecycle({
  aggregate: 'task',
  streamType: 'task',
  title: 'Task',
  summary:
    'Detached host work observable as a task (agent.spawn, terminal.exec, evolver.run, schedule.fire), ' +
    'projected onto the task board. Foreground turns are never tasks.',
  invariants: [
    'The seed paths: created → active → completed → archived; active ↔ blocked; active ↔ waiting; active → cancelled → deleted; cancelled → archived; deleted → archived; created → cancelled (cancel before start); active → failed → archived.',
    'A waiting or blocked task can be cancelled (an operator, or the cancel of its parent run, must be able to stop it) or failed (its host died while it waited): a terminal run never has to leave a live task behind.',
    'A cancelled task never returns to active: cancelled leads only to deleted or archived, so it leaves the active board.',
    'Resume cannot resurrect a deleted task: nothing leaves deleted except task.archived.',
    'The UI cannot invent a transition: the operator view offers exactly `allowedEvents(taskLifecycle, state)`.',
    'Notices never move a task: task.completion_ready when it ends (completed, failed, cancelled) or is blocked; task.completion_acknowledged while it is blocked, active again, waiting or ended. A deleted or archived task takes neither: its pending notices are settled (their work items cancelled) in the commit that deletes or archives it.',
    'Cancel, delete and archive are idempotent: repeating them appends nothing (the machine itself refuses the duplicate, so a duplicate in the log is a violation).',
  ],
  machine: taskMachine,
  vocabulary: taskEvents,
  idempotent: [{ event: 'task.cancelled', alsoIn: ['deleted'] }, { event: 'task.deleted' }, { event: 'task.archived' }],
});
