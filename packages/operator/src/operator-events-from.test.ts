import type { RecordedEvent } from '@demiurge/contracts';
import { describe, expect, it } from 'vitest';
import { OperatorEvent, operatorEventNames } from './operator-events.js';
import { operatorEventsFrom } from './operator-events-from.js';

const id = (prefix: string) => `${prefix}_01JD5Y7Q6N0000000000000001`;
const [SES, TRN, RUN, MSG, WRK, APR, DLV] = ['ses', 'trn', 'run', 'msg', 'wrk', 'apr', 'dlv'].map(id) as [
  string,
  string,
  string,
  string,
  string,
  string,
  string,
];

function recorded(type: string, data: unknown, meta: Partial<RecordedEvent['meta']> = {}): RecordedEvent {
  return {
    position: 1,
    eventId: id('evt'),
    streamType: type.split('.')[0]!,
    streamId: 'x',
    streamVersion: 1,
    type,
    schemaVersion: 1,
    data,
    meta: { actor: { kind: 'system', id: 'demiurge' }, ...meta },
    recordedAt: '2026-05-01T09:00:00.000Z',
  };
}

const error = { code: 'boom', message: 'it broke' };

describe('operatorEventsFrom', () => {
  const cases: Array<[string, RecordedEvent, OperatorEvent[]]> = [
    [
      'a persisted message',
      recorded('message.recorded', {
        messageId: MSG,
        sessionId: SES,
        turnId: TRN,
        role: 'assistant',
        text: 'hi',
        visibility: 'persist',
      }),
      [
        {
          event: 'operator.message',
          payload: {
            message_id: MSG,
            session_id: SES,
            turn_id: TRN,
            role: 'assistant',
            text: 'hi',
            visibility: 'persist',
          },
        },
      ],
    ],
    [
      'a transient message',
      recorded('message.recorded', {
        messageId: MSG,
        sessionId: SES,
        role: 'system',
        text: 'typing',
        visibility: 'transient',
      }),
      [],
    ],
    [
      'an approval request',
      recorded('approval.requested', {
        approvalId: APR,
        sessionId: SES,
        action: 'terminal.exec',
        reason: 'rm -rf',
        tool: 'shell',
      }),
      [
        {
          event: 'operator.approval.opened',
          payload: { approval_id: APR, session_id: SES, action: 'terminal.exec', reason: 'rm -rf', tool: 'shell' },
        },
      ],
    ],
    [
      'a completed turn',
      recorded('turn.completed', { turnId: TRN, sessionId: SES }),
      [{ event: 'operator.status', payload: { subject: 'turn', state: 'completed', session_id: SES, turn_id: TRN } }],
    ],
    [
      'a failed turn',
      recorded('turn.failed', { turnId: TRN, sessionId: SES, error }),
      [
        {
          event: 'operator.status',
          payload: { subject: 'turn', state: 'failed', session_id: SES, turn_id: TRN, error },
        },
      ],
    ],
    [
      'a cancelled turn',
      recorded('turn.cancelled', { turnId: TRN, sessionId: SES, reason: 'interrupted' }),
      [
        {
          event: 'operator.status',
          payload: { subject: 'turn', state: 'cancelled', session_id: SES, turn_id: TRN, reason: 'interrupted' },
        },
      ],
    ],
    [
      'a completed run (session from meta)',
      recorded('run.completed', { runId: RUN }, { sessionId: SES }),
      [{ event: 'operator.status', payload: { subject: 'run', state: 'completed', run_id: RUN, session_id: SES } }],
    ],
    [
      'a failed run',
      recorded('run.failed', { runId: RUN, error }),
      [{ event: 'operator.status', payload: { subject: 'run', state: 'failed', run_id: RUN, error } }],
    ],
    [
      'a cancelled run',
      recorded('run.cancelled', { runId: RUN, reason: 'operator', resumable: false }),
      [{ event: 'operator.status', payload: { subject: 'run', state: 'cancelled', run_id: RUN, reason: 'operator' } }],
    ],
    ['a started run', recorded('run.started', { runId: RUN, owner: 'h' }), []],
    ['a started turn', recorded('turn.started', { turnId: TRN, sessionId: SES }), []],
    [
      'enqueued work',
      recorded('work.enqueued', { workId: WRK, kind: 'delivery.send', subjectId: DLV }),
      [
        {
          event: 'operator.work.updated',
          payload: { work_id: WRK, type: 'work.enqueued', status: 'queued', kind: 'delivery.send' },
        },
      ],
    ],
    [
      'a failed attempt with a retry',
      recorded('work.failed', { workId: WRK, claimToken: 't', error, retryAt: '2026-05-01T09:05:00.000Z' }),
      [
        {
          event: 'operator.work.updated',
          payload: { work_id: WRK, type: 'work.failed', status: 'retry_scheduled', error },
        },
      ],
    ],
    [
      'a final failure',
      recorded('work.failed', { workId: WRK, claimToken: 't', error }),
      [{ event: 'operator.work.updated', payload: { work_id: WRK, type: 'work.failed', status: 'failed', error } }],
    ],
    [
      'an unknown send resolved as sent',
      recorded('work.resolved', { workId: WRK, decision: 'sent' }),
      [{ event: 'operator.work.updated', payload: { work_id: WRK, type: 'work.resolved', status: 'succeeded' } }],
    ],
    [
      'an interrupted send',
      recorded('work.unknown', { workId: WRK, claimToken: 't', reason: 'crash' }),
      [
        {
          event: 'operator.work.updated',
          payload: { work_id: WRK, type: 'work.unknown', status: 'unknown', reason: 'crash' },
        },
      ],
    ],
    [
      'corrupt work',
      recorded('work.corrupt', { workId: WRK, detail: 'bad payload' }),
      [
        {
          event: 'operator.work.updated',
          payload: { work_id: WRK, type: 'work.corrupt', status: 'corrupt', reason: 'bad payload' },
        },
      ],
    ],
    [
      'a claim',
      recorded('work.claimed', {
        workId: WRK,
        claimToken: 't',
        attempt: 1,
        owner: 'h',
        leaseUntil: '2026-05-01T09:05:00.000Z',
      }),
      [{ event: 'operator.work.updated', payload: { work_id: WRK, type: 'work.claimed', status: 'claimed' } }],
    ],
    [
      'a heartbeat',
      recorded('work.heartbeat', { workId: WRK, claimToken: 't', leaseUntil: '2026-05-01T09:05:00.000Z' }),
      [],
    ],
    [
      'an operator-channel delivery (the host pushes operator.deliver)',
      recorded('delivery.queued', {
        deliveryId: DLV,
        sessionId: SES,
        messageId: MSG,
        workId: WRK,
        channel: 'operator',
      }),
      [],
    ],
    ['a task event', recorded('task.started', { taskId: id('tsk'), worker: 'w' }), []],
  ];

  it.each(cases)('projects %s', (_name, event, expected) => {
    const projected = operatorEventsFrom(event);
    expect(projected).toEqual(expected);
    for (const e of projected) expect(OperatorEvent.parse(e)).toEqual(e);
  });

  it('projects every work event type except the heartbeat', () => {
    const types = ['enqueued', 'claimed', 'running', 'sending', 'succeeded', 'failed', 'cancelled', 'unknown'];
    const more = ['lease_expired', 'acknowledged', 'resolved', 'corrupt'];
    for (const t of [...types, ...more]) {
      const data = { workId: WRK, decision: 'retry', reason: 'r', detail: 'd', error, kind: 'k' };
      expect(operatorEventsFrom(recorded(`work.${t}`, data)), t).toHaveLength(1);
    }
  });

  it('lists exactly the event names of the union', () => {
    const union = OperatorEvent.options.map((o) => o.shape.event.value);
    expect([...operatorEventNames].sort()).toEqual([...union].sort());
  });
});
