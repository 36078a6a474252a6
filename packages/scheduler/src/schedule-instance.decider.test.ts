import type { NewEvent } from '@demiurge/contracts';
import { IllegalTransitionError } from '@demiurge/lifecycle';
import { deciderSpecification } from '@demiurge/lifecycle/testing';
import { describe, it } from 'vitest';
import { type ScheduleInstanceCommand, scheduleInstanceDecider } from './schedule-instance.decider.js';

const instanceId = 'sci_01JD5Y7Q6N0000000000000000';
const scheduleId = 'sch_01JD5Y7Q6N0000000000000000';
const taskId = 'tsk_01JD5Y7Q6N0000000000000000';
const otherTask = 'tsk_01JD5Y7Q6N0000000000000001';
const dueAt = '2026-01-01T09:00:00.000Z';
const spec = deciderSpecification<ScheduleInstanceCommand, typeof scheduleInstanceDecider.initialState>(
  scheduleInstanceDecider,
  { streamType: 'schedule_instance' },
);

const e = (type: string, data: Record<string, unknown> = {}): NewEvent => ({
  type,
  data: { scheduleInstanceId: instanceId, ...data },
});
const scheduled = e('schedule_instance.scheduled', { scheduleId, dueAt });
const claimed = e('schedule_instance.claimed', { taskId });
const completed = e('schedule_instance.completed');
const duplicate = { code: 'duplicate', message: 'another instance fires this due time' };
const fireFailed = { code: 'fire_failed', message: 'boom' };

describe('the schedule-instance decider: given (instance events) / when (command) / then (events or error)', () => {
  it('schedule: a new instance, once', () => {
    spec.given([]).when({ kind: 'schedule', instanceId, scheduleId, dueAt }).thenAppends([scheduled]);
    spec
      .given([scheduled])
      .when({ kind: 'schedule', instanceId, scheduleId, dueAt })
      .thenThrows(IllegalTransitionError);
  });

  it('claim: a scheduled instance takes its fire task; a claimed or final one keeps what it has', () => {
    spec.given([scheduled]).when({ kind: 'claim', instanceId, taskId }).thenAppends([claimed]);
    spec.given([scheduled, claimed]).when({ kind: 'claim', instanceId, taskId: otherTask }).thenNothing();
    spec.given([scheduled, claimed, completed]).when({ kind: 'claim', instanceId, taskId }).thenNothing();
  });

  it('retire: only a scheduled instance is retired; one that moved on is left as it is', () => {
    spec
      .given([scheduled])
      .when({ kind: 'retire', instanceId, error: duplicate })
      .thenAppends([e('schedule_instance.failed', { error: duplicate })]);
    spec.given([scheduled, claimed]).when({ kind: 'retire', instanceId, error: duplicate }).thenNothing();
  });

  it('complete: only a claimed instance completes, once', () => {
    spec.given([scheduled, claimed]).when({ kind: 'complete', instanceId }).thenAppends([completed]);
    spec.given([scheduled]).when({ kind: 'complete', instanceId }).thenThrows(IllegalTransitionError);
    spec
      .given([scheduled, claimed, completed])
      .when({ kind: 'complete', instanceId })
      .thenThrows(IllegalTransitionError);
  });

  it('fail: a scheduled or claimed instance ends in error; a final one refuses', () => {
    spec
      .given([scheduled, claimed])
      .when({ kind: 'fail', instanceId, error: fireFailed })
      .thenAppends([e('schedule_instance.failed', { error: fireFailed })]);
    spec
      .given([scheduled])
      .when({ kind: 'fail', instanceId, error: fireFailed })
      .thenAppends([e('schedule_instance.failed', { error: fireFailed })]);
    spec
      .given([scheduled, claimed, completed])
      .when({ kind: 'fail', instanceId, error: fireFailed })
      .thenThrows(IllegalTransitionError);
  });
});
