import type { NewEvent } from '@demiurge/contracts';
import { IllegalTransitionError } from '@demiurge/lifecycle';
import { deciderSpecification } from '@demiurge/lifecycle/testing';
import { describe, it } from 'vitest';
import { NotFoundError, StaleClaimError } from './errors.js';
import { workDecider } from './work.decider.js';

const workId = 'wrk_01JD5Y7Q6N0000000000000000';
const spec = deciderSpecification(workDecider, { streamType: 'work' });
const NOW = '2026-01-01T00:00:10.000Z';
const LEASE = '2026-01-01T00:00:30.000Z';

const e = (type: string, data: Record<string, unknown> = {}): NewEvent => ({ type, data: { workId, ...data } });
const enqueued = e('work.enqueued', { kind: 'delivery.send', subjectId: 'dlv_1' });
const claimed = (claimToken = 'c1', attempt = 1, leaseUntil = LEASE) =>
  e('work.claimed', { claimToken, attempt, owner: 'host-a', leaseUntil });
const sending = e('work.sending', { claimToken: 'c1' });
const succeeded = e('work.succeeded', { claimToken: 'c1' });
const expired = e('work.lease_expired', { claimToken: 'c1', attempt: 1 });
const unknown = e('work.unknown', { claimToken: 'c1', reason: 'crashed mid-send' });
const claim = (claimToken = 'c1', now = NOW) => ({ workId, claimToken, now });
const error = { code: 'http', message: '503' };

describe('work item decider: the claimant commands', () => {
  it('heartbeat, running, sending, succeed, fail, unknown: the current claim writes them', () => {
    spec
      .given([enqueued, claimed()])
      .when({ type: 'heartbeat', ...claim(), leaseUntil: '2026-01-01T00:01:00.000Z' })
      .thenAppends([e('work.heartbeat', { claimToken: 'c1', leaseUntil: '2026-01-01T00:01:00.000Z' })]);
    spec
      .given([enqueued, claimed()])
      .when({ type: 'mark_running', ...claim() })
      .thenAppends([e('work.running', { claimToken: 'c1' })]);
    spec
      .given([enqueued, claimed()])
      .when({ type: 'mark_sending', ...claim() })
      .thenAppends([sending]);
    spec
      .given([enqueued, claimed(), sending])
      .when({ type: 'succeed', ...claim(), externalRef: 'msg-1' })
      .thenAppends([e('work.succeeded', { claimToken: 'c1', externalRef: 'msg-1' })]);
    spec
      .given([enqueued, claimed()])
      .when({ type: 'fail', ...claim(), error, retryAt: LEASE })
      .thenAppends([e('work.failed', { claimToken: 'c1', error, retryAt: LEASE })]);
    spec
      .given([enqueued, claimed(), sending])
      .when({ type: 'mark_unknown', ...claim(), reason: 'crashed mid-send' })
      .thenAppends([unknown]);
  });

  it('a claim that no longer holds the item, or whose lease ran out, is refused as stale', () => {
    const reclaimed = [enqueued, claimed(), expired, claimed('c2', 2)];
    spec
      .given(reclaimed)
      .when({ type: 'heartbeat', ...claim(), leaseUntil: LEASE })
      .thenThrows(StaleClaimError);
    spec
      .given(reclaimed)
      .when({ type: 'succeed', ...claim() })
      .thenThrows(StaleClaimError);
    spec
      .given([enqueued, claimed(), succeeded])
      .when({ type: 'fail', ...claim(), error })
      .thenThrows(StaleClaimError);
    const late = claim('c1', '2026-01-01T00:00:31.000Z');
    spec
      .given([enqueued, claimed()])
      .when({ type: 'mark_running', ...late })
      .thenThrows(StaleClaimError);
    // A sending item keeps its claimant past the lease: it can never be claimed again anyway.
    spec
      .given([enqueued, claimed(), sending])
      .when({ type: 'mark_unknown', ...late, reason: 'r' })
      .thenAppends([e('work.unknown', { claimToken: 'c1', reason: 'r' })]);
  });

  it('refuses what the machine refuses: running again once sending', () => {
    spec
      .given([enqueued, claimed(), sending])
      .when({ type: 'mark_running', ...claim() })
      .thenThrows(IllegalTransitionError);
  });
});

describe('work item decider: cancel, resolve, acknowledge, expire', () => {
  it('cancels unsent work; a second cancel appends nothing; sending work cannot be cancelled', () => {
    const cancelled = e('work.cancelled', { reason: 'not needed' });
    spec.given([enqueued]).when({ type: 'cancel', workId, reason: 'not needed' }).thenAppends([cancelled]);
    spec.given([enqueued, cancelled]).when({ type: 'cancel', workId, reason: 'again' }).thenNothing();
    spec
      .given([enqueued, claimed(), sending])
      .when({ type: 'cancel', workId, reason: 'too late' })
      .thenThrows(IllegalTransitionError);
  });

  it('an operator resolves unknown work once; the same decision again is a no-op; queued work has nothing to resolve', () => {
    const resolved = e('work.resolved', { decision: 'retry', retryAt: LEASE, note: 'checked' });
    spec
      .given([enqueued, claimed(), sending, unknown])
      .when({ type: 'resolve', workId, decision: 'retry', retryAt: LEASE, note: 'checked' })
      .thenAppends([resolved]);
    const sent = e('work.resolved', { decision: 'sent' });
    spec
      .given([enqueued, claimed(), sending, unknown, sent])
      .when({ type: 'resolve', workId, decision: 'sent' })
      .thenNothing();
    spec.given([enqueued]).when({ type: 'resolve', workId, decision: 'sent' }).thenThrows(IllegalTransitionError);
  });

  it('acknowledges once, with the current claim (or after it settled); a stale claim is refused', () => {
    const acked = e('work.acknowledged', { claimToken: 'c1' });
    spec
      .given([enqueued, claimed(), succeeded])
      .when({ type: 'acknowledge', workId, claimToken: 'c1' })
      .thenAppends([acked]);
    spec.given([enqueued, claimed()]).when({ type: 'acknowledge', workId, claimToken: 'c1' }).thenAppends([acked]);
    spec.given([enqueued, claimed(), succeeded, acked]).when({ type: 'acknowledge', workId }).thenNothing();
    spec
      .given([enqueued, claimed(), expired, claimed('c2', 2)])
      .when({ type: 'acknowledge', workId, claimToken: 'c1' })
      .thenThrows(StaleClaimError);
    spec.given([enqueued]).when({ type: 'acknowledge', workId }).thenThrows(IllegalTransitionError);
  });

  it('records an expired lease (claimed → retry, sending → unknown), nothing while the lease is live', () => {
    const after = '2026-01-01T00:00:31.000Z';
    spec.given([enqueued, claimed()]).when({ type: 'expire_lease', workId, now: after }).thenAppends([expired]);
    spec
      .given([enqueued, claimed(), sending])
      .when({ type: 'expire_lease', workId, now: after })
      .thenAppends([expired]);
    spec.given([enqueued, claimed()]).when({ type: 'expire_lease', workId, now: NOW }).thenNothing();
    spec.given([enqueued, claimed(), expired]).when({ type: 'expire_lease', workId, now: after }).thenNothing();
  });

  it('an item never enqueued is not found', () => {
    spec.given([]).when({ type: 'cancel', workId, reason: 'x' }).thenThrows(NotFoundError);
    spec
      .given([])
      .when({ type: 'heartbeat', ...claim(), leaseUntil: LEASE })
      .thenThrows(NotFoundError);
  });
});
