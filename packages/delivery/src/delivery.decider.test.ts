import type { NewEvent } from '@demiurge/contracts';
import { foldState, IllegalTransitionError, workLifecycle } from '@demiurge/lifecycle';
import { deciderSpecification, recordGiven } from '@demiurge/lifecycle/testing';
import { describe, it } from 'vitest';
import { type DeliveryCommand, deliveryDecider } from './delivery.decider.js';
import type { WorkHistory } from './delivery-sync.js';

const deliveryId = 'dlv_01JD5Y7Q6N0000000000000000';
const workId = 'wrk_01JD5Y7Q6N0000000000000000';
const spec = deciderSpecification<DeliveryCommand, typeof deliveryDecider.initialState>(deliveryDecider, {
  streamType: 'delivery',
});

const d = (type: string, data: Record<string, unknown> = {}): NewEvent => ({ type, data: { deliveryId, ...data } });
const queued = d('delivery.queued', {
  sessionId: 'ses_01JD5Y7Q6N0000000000000000',
  messageId: 'msg_01JD5Y7Q6N0000000000000000',
  workId,
  channel: 'webhook',
});
const sending = (attempt: number) => d('delivery.sending', { attempt });
const error = { code: 'http_503', message: 'busy' };
const failed = d('delivery.failed', { error });
const unrouted = d('delivery.unrouted', { reason: 'no route' });
const unknown = d('delivery.unknown', { reason: 'timeout after sending' });
const sent = d('delivery.sent');

/** A work item's history, as `loadWork` would give it (state folded by the work machine). */
function work(...types: string[]): WorkHistory {
  const claim = { workId, claimToken: 'clm_1' };
  const data: Record<string, Record<string, unknown>> = {
    'work.enqueued': { workId, kind: 'delivery.send', subjectId: deliveryId },
    'work.claimed': { ...claim, attempt: 1, owner: 'host-a', leaseUntil: '2026-01-01T00:01:00.000Z' },
    'work.sending': claim,
    'work.lease_expired': { ...claim, attempt: 1 },
    'work.unknown': { ...claim, reason: 'reset mid-send' },
    'work.resolved': { workId, decision: 'retry', note: 'customer asked' },
  };
  const events = recordGiven(
    types.map((type) => ({ type, data: data[type] ?? {} })),
    'work',
    workId,
  );
  return { state: foldState(workLifecycle, events, workId), events };
}
const interrupted =
  'the send was interrupted: its lease expired at 2026-01-01T00:00:00.000Z with no outcome recorded (a crash or a stall)';

describe('the delivery decider: given (delivery events) / when (command) / then (events or error)', () => {
  it('start_send: the next attempt starts from queued, failed or unrouted; never twice at once', () => {
    spec
      .given([queued])
      .when({ kind: 'start_send', deliveryId })
      .thenAppends([sending(1)]);
    spec
      .given([queued, sending(1), failed])
      .when({ kind: 'start_send', deliveryId })
      .thenAppends([sending(2)]);
    spec
      .given([queued, unrouted])
      .when({ kind: 'start_send', deliveryId })
      .thenAppends([sending(1)]);
    spec
      .given([queued, sending(1)])
      .when({ kind: 'start_send', deliveryId })
      .thenThrows(IllegalTransitionError);
    spec
      .given([queued, sending(1), unknown])
      .when({ kind: 'start_send', deliveryId })
      .thenThrows(IllegalTransitionError);
    spec.given([]).when({ kind: 'start_send', deliveryId }).thenThrows(IllegalTransitionError);
  });

  it('fail_unsendable: the attempt is counted and fails at once; nothing after sent', () => {
    spec
      .given([queued])
      .when({ kind: 'fail_unsendable', deliveryId, error })
      .thenAppends([sending(1), failed]);
    spec
      .given([queued, sending(1), sent])
      .when({ kind: 'fail_unsendable', deliveryId, error })
      .thenThrows(IllegalTransitionError);
  });

  it('record_sent, record_failed, record_unknown: only while sending', () => {
    spec
      .given([queued, sending(1)])
      .when({ kind: 'record_sent', deliveryId, externalId: 'ext-1' })
      .thenAppends([d('delivery.sent', { externalId: 'ext-1' })]);
    spec
      .given([queued, sending(1)])
      .when({ kind: 'record_sent', deliveryId })
      .thenAppends([sent]);
    spec.given([queued]).when({ kind: 'record_sent', deliveryId }).thenThrows(IllegalTransitionError);
    spec
      .given([queued, sending(1)])
      .when({ kind: 'record_failed', deliveryId, error })
      .thenAppends([failed]);
    spec
      .given([queued, sending(1), unknown])
      .when({ kind: 'record_failed', deliveryId, error })
      .thenThrows(IllegalTransitionError);
    const reason = 'timeout after sending';
    spec
      .given([queued, sending(1)])
      .when({ kind: 'record_unknown', deliveryId, reason })
      .thenAppends([unknown]);
    spec
      .given([queued, sending(1), sent])
      .when({ kind: 'record_unknown', deliveryId, reason })
      .thenThrows(IllegalTransitionError);
  });

  it('record_unrouted: from queued or sending; a failed delivery passes through sending; unrouted stays', () => {
    const when = { kind: 'record_unrouted', deliveryId, reason: 'no route' } as const;
    spec.given([queued]).when(when).thenAppends([unrouted]);
    spec
      .given([queued, sending(1)])
      .when(when)
      .thenAppends([unrouted]);
    spec
      .given([queued, sending(1), failed])
      .when(when)
      .thenAppends([sending(2), unrouted]);
    spec.given([queued, unrouted]).when(when).thenNothing();
    spec
      .given([queued, sending(1), sent])
      .when(when)
      .thenThrows(IllegalTransitionError);
  });

  it('agree_with_work: a sending delivery whose work became unknown is unknown; else nothing', () => {
    const when = (w: WorkHistory | null) => ({ kind: 'agree_with_work', deliveryId, work: w }) as const;
    spec
      .given([queued, sending(1)])
      .when(when(work('work.enqueued', 'work.claimed', 'work.sending', 'work.lease_expired')))
      .thenAppends([d('delivery.unknown', { reason: interrupted })]);
    spec
      .given([queued, sending(1), unknown])
      .when(when(work('work.enqueued', 'work.claimed', 'work.sending', 'work.unknown', 'work.resolved')))
      .thenAppends([d('delivery.resolved', { decision: 'retry', note: 'customer asked' })]);
    spec
      .given([queued, sending(1)])
      .when(when(work('work.enqueued', 'work.claimed', 'work.sending')))
      .thenNothing();
    spec
      .given([queued, sending(1)])
      .when(when(null))
      .thenNothing();
    spec
      .given([queued, sending(1), sent])
      .when(when(work('work.enqueued')))
      .thenNothing();
  });

  it('resolve: an unknown delivery takes the decision once; the same decision again appends nothing', () => {
    const unknownWork = work('work.enqueued', 'work.claimed', 'work.sending', 'work.unknown');
    const resolve = (decision: 'sent' | 'failed' | 'retry') =>
      ({ kind: 'resolve', deliveryId, decision, note: 'checked', work: unknownWork }) as const;
    spec
      .given([queued, sending(1), unknown])
      .when(resolve('sent'))
      .thenAppends([d('delivery.resolved', { decision: 'sent', note: 'checked' })]);
    // A sending delivery whose work is unknown agrees with it first.
    spec
      .given([queued, sending(1)])
      .when(resolve('retry'))
      .thenAppends([
        d('delivery.unknown', { reason: 'reset mid-send' }),
        d('delivery.resolved', { decision: 'retry', note: 'checked' }),
      ]);
    const resolvedSent = d('delivery.resolved', { decision: 'sent', note: 'checked' });
    spec
      .given([queued, sending(1), unknown, resolvedSent])
      .when(resolve('sent'))
      .thenNothing();
    spec
      .given([queued, sending(1), unknown, resolvedSent])
      .when(resolve('failed'))
      .thenThrows(IllegalTransitionError);
    spec.given([queued]).when(resolve('sent')).thenThrows(IllegalTransitionError);
  });
});
