import type { NewEvent } from '@demiurge/contracts';
import { describe, expect, it } from 'vitest';
import { IllegalTransitionError } from '../errors.js';
import { recordGiven } from '../testing/index.js';
import {
  evolveScheduleInstance,
  initialScheduleInstanceFacts,
  type ScheduleInstanceFacts,
  scheduleInstanceFold,
} from './schedule-instance.fold.js';

const instanceId = 'sci_01JD5Y7Q6N0000000000000000';
const scheduleId = 'sch_01JD5Y7Q6N0000000000000000';
const taskId = 'tsk_01JD5Y7Q6N0000000000000000';
const dueAt = '2026-01-01T09:00:00.000Z';
const e = (type: string, data: Record<string, unknown> = {}): NewEvent => ({
  type,
  data: { scheduleInstanceId: instanceId, ...data },
});
const scheduled = e('schedule_instance.scheduled', { scheduleId, dueAt });

/** given (events) → then (the instance), through the strict fold and the tolerant one alike. */
function given(...events: NewEvent[]): ScheduleInstanceFacts {
  const recorded = recordGiven(events, 'schedule_instance', instanceId);
  const strict = recorded.reduce(
    (s, ev) => scheduleInstanceFold.evolve(s, ev, instanceId),
    initialScheduleInstanceFacts,
  );
  const tolerant = recorded.reduce<ScheduleInstanceFacts>(
    (s, ev) => evolveScheduleInstance(s, ev) ?? s,
    initialScheduleInstanceFacts,
  );
  expect(tolerant).toEqual(strict);
  return strict;
}

describe('the schedule-instance fold', () => {
  it('follows an instance: scheduled, claimed with its task, completed', () => {
    expect(given(scheduled)).toEqual({ status: 'scheduled', instanceId, scheduleId, dueAt, taskId: null, error: null });
    expect(given(scheduled, e('schedule_instance.claimed', { taskId }), e('schedule_instance.completed'))).toEqual({
      status: 'completed',
      instanceId,
      scheduleId,
      dueAt,
      taskId,
      error: null,
    });
  });

  it('records why an instance is in error, from scheduled (retired) or from claimed (the fire failed)', () => {
    const error = { code: 'duplicate', message: 'another instance fires it' };
    expect(given(scheduled, e('schedule_instance.failed', { error }))).toMatchObject({ status: 'error', error });
    const failed = given(
      scheduled,
      e('schedule_instance.claimed', { taskId }),
      e('schedule_instance.failed', { error: { code: 'fire_failed', message: 'boom' } }),
    );
    expect(failed).toMatchObject({ status: 'error', taskId, error: { code: 'fire_failed', message: 'boom' } });
  });

  it('refuses what the machine refuses: strict throws naming the instance, tolerant skips', () => {
    const [s, completed] = recordGiven([scheduled, e('schedule_instance.completed')], 'schedule_instance', instanceId);
    const state = scheduleInstanceFold.evolve(initialScheduleInstanceFacts, s!, instanceId);
    expect(() => scheduleInstanceFold.evolve(state, completed!, instanceId)).toThrow(IllegalTransitionError);
    expect(() => scheduleInstanceFold.evolve(state, completed!, instanceId)).toThrow(
      `schedule instance ${instanceId} is scheduled`,
    );
    expect(evolveScheduleInstance(state, completed!)).toBeUndefined();
    expect(evolveScheduleInstance(initialScheduleInstanceFacts, completed!)).toBeUndefined();
  });
});
