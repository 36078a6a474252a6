import type { NewEvent, TaskId } from '@demiurge/contracts';
import { describe, expect, it } from 'vitest';
import {
  checkEvents,
  createDecider,
  deliveryLifecycle,
  foldState,
  IllegalTransitionError,
  isIdempotentRepeat,
  runLifecycle,
  type TaskEventType,
  type TaskState,
  taskLifecycle,
  workLifecycle,
} from './index.js';
import { deciderSpecification } from './testing/index.js';

const taskId = 'tsk_01JD5Y7Q6N0000000000000000' as TaskId;
type TaskCommand =
  | { readonly kind: 'start' }
  | { readonly kind: 'cancel'; readonly reason: string }
  | { readonly kind: 'delete' }
  | { readonly kind: 'archive' }
  | { readonly kind: 'resume' };

const tasks = createDecider(taskLifecycle, {
  streamId: () => taskId,
  decide: (command: TaskCommand): NewEvent<TaskEventType>[] => {
    switch (command.kind) {
      case 'start':
        return [{ type: 'task.started', data: { taskId, worker: 'w1' } }];
      case 'cancel':
        return [{ type: 'task.cancelled', data: { taskId, reason: command.reason } }];
      case 'delete':
        return [{ type: 'task.deleted', data: { taskId } }];
      case 'archive':
        return [{ type: 'task.archived', data: { taskId } }];
      case 'resume':
        return [{ type: 'task.resumed', data: { taskId } }];
    }
  },
});

/** given (events so far) / when (command) / then (types appended). */
function given(...types: TaskEventType[]) {
  const state = types.reduce<TaskState>((s, type) => tasks.evolve(s, { type }), tasks.initialState);
  return {
    when: (command: TaskCommand) => ({
      thenAppends: (...expected: string[]) => expect(tasks.decide(command, state).map((e) => e.type)).toEqual(expected),
      thenRefused: (allowed: string[]) => {
        expect(() => tasks.decide(command, state)).toThrow(IllegalTransitionError);
        try {
          tasks.decide(command, state);
        } catch (e) {
          expect(e).toMatchObject({ streamId: taskId, from: state, allowed });
        }
      },
    }),
  };
}

describe('task decider', () => {
  it('starts a created task and cancels an active one', () => {
    given('task.submitted').when({ kind: 'start' }).thenAppends('task.started');
    given('task.submitted', 'task.started')
      .when({ kind: 'cancel', reason: 'no longer needed' })
      .thenAppends('task.cancelled');
  });

  it('treats repeated cancel, delete and archive as no-ops', () => {
    given('task.submitted', 'task.cancelled').when({ kind: 'cancel', reason: 'again' }).thenAppends();
    given('task.submitted', 'task.cancelled', 'task.deleted').when({ kind: 'cancel', reason: 'again' }).thenAppends();
    given('task.submitted', 'task.cancelled', 'task.deleted').when({ kind: 'delete' }).thenAppends();
    given('task.submitted', 'task.cancelled', 'task.archived').when({ kind: 'archive' }).thenAppends();
  });

  it('refuses what the machine refuses, naming the allowed events', () => {
    given('task.submitted', 'task.cancelled', 'task.deleted').when({ kind: 'resume' }).thenRefused(['task.archived']);
    given('task.submitted', 'task.started', 'task.completed')
      .when({ kind: 'cancel', reason: 'too late' })
      .thenRefused(['task.archived', 'task.completion_ready', 'task.completion_acknowledged']);
    given('task.submitted', 'task.started', 'task.completed', 'task.archived').when({ kind: 'delete' }).thenRefused([]);
  });

  it('checks a multi-event decision in order and drops only the repeats', () => {
    const events: NewEvent<TaskEventType>[] = [
      { type: 'task.cancelled', data: {} },
      { type: 'task.cancelled', data: {} },
      { type: 'task.deleted', data: {} },
    ];
    expect(checkEvents(taskLifecycle, 'active', events).map((e) => e.type)).toEqual(['task.cancelled', 'task.deleted']);
    expect(() => checkEvents(taskLifecycle, 'active', [{ type: 'task.deleted', data: {} }], taskId)).toThrow(
      `task ${taskId} is active; task.deleted is not allowed`,
    );
  });

  it('folds a stream from none and refuses a stream the machine would not have written', () => {
    expect(foldState(taskLifecycle, [])).toBe('none');
    expect(foldState(taskLifecycle, [{ type: 'task.submitted' }, { type: 'task.started' }])).toBe('active');
    expect(() => foldState(taskLifecycle, [{ type: 'task.started' }], taskId)).toThrow(/does not exist yet/);
  });
});

describe('idempotent repeats', () => {
  it('are declared per event and read from where the event leads', () => {
    expect(isIdempotentRepeat(runLifecycle, 'cancelling', 'run.cancel_requested')).toBe(true);
    expect(isIdempotentRepeat(runLifecycle, 'cancelled', 'run.cancel_requested')).toBe(true);
    expect(isIdempotentRepeat(runLifecycle, 'cancelled', 'run.cancelled')).toBe(true);
    expect(isIdempotentRepeat(runLifecycle, 'completed', 'run.cancelled')).toBe(false);
    expect(isIdempotentRepeat(runLifecycle, 'archived', 'run.archived')).toBe(true);
    expect(isIdempotentRepeat(runLifecycle, 'completed', 'run.completed')).toBe(false);
    expect(isIdempotentRepeat(workLifecycle, 'cancelled', 'work.cancelled')).toBe(true);
    expect(isIdempotentRepeat(workLifecycle, 'acknowledged', 'work.acknowledged')).toBe(true);
    expect(isIdempotentRepeat(taskLifecycle, 'active', 'task.cancelled')).toBe(false);
  });

  it('depend on the data of a guarded event: the same decision again is a no-op, a different one is refused', () => {
    const resolved = (decision: string) => ({ type: 'delivery.resolved' as const, data: { decision } });
    expect(isIdempotentRepeat(deliveryLifecycle, 'sent', resolved('sent'))).toBe(true);
    expect(isIdempotentRepeat(deliveryLifecycle, 'sent', resolved('failed'))).toBe(false);
    expect(isIdempotentRepeat(deliveryLifecycle, 'failed', resolved('failed'))).toBe(true);
  });
});

describe('deciderSpecification (given/when/then, Emmett style)', () => {
  const spec = deciderSpecification(tasks, { streamType: 'task' });
  const submitted: NewEvent = { type: 'task.submitted', data: { taskId } };
  it('then: the events a command appends', () => {
    spec
      .given([submitted])
      .when({ kind: 'cancel', reason: 'stop' })
      .thenAppends([{ type: 'task.cancelled', data: { taskId, reason: 'stop' } }]);
    expect(() =>
      spec
        .given([submitted])
        .when({ kind: 'cancel', reason: 'stop' })
        .thenAppends([{ type: 'task.deleted', data: { taskId } }]),
    ).toThrow(/expected/);
  });
  it('thenNothing: an idempotent repeat; thenThrows: a refusal', () => {
    const cancelled: NewEvent = { type: 'task.cancelled', data: { taskId, reason: 'stop' } };
    spec.given([submitted, cancelled]).when({ kind: 'cancel', reason: 'again' }).thenNothing();
    spec
      .given([submitted, cancelled, { type: 'task.deleted', data: { taskId } }])
      .when({ kind: 'resume' })
      .thenThrows(IllegalTransitionError);
    expect(() => spec.given([submitted]).when({ kind: 'start' }).thenThrows(IllegalTransitionError)).toThrow(
      /without throwing/,
    );
  });
});
