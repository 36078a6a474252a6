import type { RecordedEvent } from '@demiurge/contracts';
import { describe, expect, it } from 'vitest';
import { scheduleReport } from './multi-host-checks.js';

const A = 'host:vm:8142:1796188527428';
const B = 'host:vm:7598:1796188517305';
let position = 0;
const event = (recordedAt: string, streamId: string, type: string, data: object, actor = A): RecordedEvent =>
  ({
    position: ++position,
    recordedAt,
    streamId,
    streamType: streamId.startsWith('wrk_') ? 'work' : streamId.startsWith('tsk_') ? 'task' : 'schedule_instance',
    type,
    data,
    meta: { actor: { kind: 'system', id: actor } },
  }) as unknown as RecordedEvent;

/** A due time that fired: its instance, its fire claimed by `A`, its task started. */
const fired = (dueAt: string, n: number): RecordedEvent[] => [
  event(dueAt, `sci_${n}`, 'schedule_instance.scheduled', { scheduleInstanceId: `sci_${n}`, dueAt }),
  event(dueAt, `wrk_${n}`, 'work.enqueued', { kind: 'schedule.fire', payload: { dueAt } }),
  event(dueAt, `wrk_${n}`, 'work.claimed', { owner: A, attempt: 1, leaseUntil: dueAt }),
  event(dueAt, `tsk_${n}`, 'task.submitted', { kind: 'schedule.fire', taskId: `tsk_${n}`, input: { dueAt } }),
  event(dueAt, `tsk_${n}`, 'task.started', { taskId: `tsk_${n}` }),
];

/** The CI failure's events for 05:15:30 (positions 4387-5144): B retired the instance, A enqueued and claimed the fire. */
const raced = (code = 'schedule_disabled'): RecordedEvent[] => {
  const dueAt = '2026-12-02T05:15:30.000Z';
  return [
    event('2026-12-02T05:15:21.585Z', 'sci_r', 'schedule_instance.scheduled', { scheduleInstanceId: 'sci_r', dueAt }),
    event('2026-12-02T05:15:35.826Z', 'sci_r', 'schedule_instance.failed', { error: { code } }, B),
    event('2026-12-02T05:15:35.801Z', 'wrk_r', 'work.enqueued', { kind: 'schedule.fire', payload: { dueAt } }),
    event('2026-12-02T05:15:37.545Z', 'wrk_r', 'work.claimed', { owner: A, attempt: 1, leaseUntil: '...' }),
    event('2026-12-02T05:15:37.644Z', 'wrk_r', 'work.failed', { error: { code: 'not_fired' } }),
  ];
};

const log = (code?: string) => [
  ...fired('2026-12-02T05:15:10.000Z', 1),
  ...fired('2026-12-02T05:15:20.000Z', 2),
  ...raced(code),
];
const who = (owner: string) => (owner === A ? 'host 1#3' : owner === B ? 'host 2#5' : owner);
const closedAt = Date.parse('2026-12-02T05:15:35.500Z');

describe('the multi-host schedule report', () => {
  it('excuses the due time a host enqueued while another retired it for the close (the CI failure of 2026-12-02)', () => {
    const report = scheduleReport(log(), new Set(), { closedAt, who });
    expect(report.notFired).toEqual([]);
    expect(report.closedByDisable).toEqual([
      expect.stringMatching(
        /^2026-12-02T05:15:30.000Z: .*instance retired schedule_disabled by host 2#5; .*enqueued by host 1#3; .*claimed by host 1#3 .*work.failed not_fired/,
      ),
    ]);
    expect(report.dueTimes).toBe(3);
    expect(report.maxEnqueueLateS).toBe(5.8);
  });

  it('still fails that due time without the close, or when it was due more than a period before the close, naming the hosts', () => {
    for (const report of [
      scheduleReport(log(), new Set(), { who }),
      scheduleReport(log(), new Set(), { closedAt: closedAt + 10_000, who }),
    ]) {
      expect(report.closedByDisable).toEqual([]);
      expect(report.notFired).toEqual([
        expect.stringMatching(
          /^2026-12-02T05:15:30.000Z: 1 work items, 0 tasks, started 0 times; .*host 2#5.*host 1#3/,
        ),
      ]);
    }
  });

  it('does not excuse an instance retired for another reason', () => {
    const report = scheduleReport(log('superseded'), new Set(), { closedAt, who });
    expect(report.closedByDisable).toEqual([]);
    expect(report.notFired).toHaveLength(1);
  });
});
