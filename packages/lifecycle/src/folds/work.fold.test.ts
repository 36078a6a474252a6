import type { NewEvent } from '@demiurge/contracts';
import { describe, expect, it } from 'vitest';
import { IllegalTransitionError } from '../errors.js';
import { recordGiven } from '../testing/index.js';
import { evolveWork, initialWorkFacts, type WorkFacts, workFold } from './work.fold.js';

const workId = 'wrk_01JD5Y7Q6N0000000000000000';
const RECORDED = '2026-01-01T00:00:00.000Z';
const e = (type: string, data: Record<string, unknown> = {}): NewEvent => ({ type, data: { workId, ...data } });
const enqueued = (extra: Record<string, unknown> = {}) =>
  e('work.enqueued', { kind: 'delivery.send', subjectId: 'dlv_1', ...extra });
const claimed = (claimToken: string, attempt: number, leaseUntil = '2026-01-01T00:01:00Z') =>
  e('work.claimed', { claimToken, attempt, owner: 'host-a', leaseUntil });

/** given (events) → then (the item), through the strict fold and the tolerant one alike. */
function given(...events: NewEvent[]): WorkFacts {
  const recorded = recordGiven(events, 'work', workId);
  const strict = recorded.reduce((s, ev) => workFold.evolve(s, ev, workId), initialWorkFacts);
  const tolerant = recorded.reduce<WorkFacts>((s, ev) => evolveWork(s, ev) ?? s, initialWorkFacts);
  expect(tolerant).toEqual(strict);
  return strict;
}

describe('the work item fold', () => {
  it('follows an item: enqueued, claimed, heartbeat, succeeded; times in one ISO form', () => {
    expect(given(enqueued({ payload: { n: 1 }, notBefore: '2026-01-01T00:00:05Z' }))).toEqual({
      ...initialWorkFacts,
      status: 'queued',
      workId,
      kind: 'delivery.send',
      subjectId: 'dlv_1',
      payload: { n: 1 },
      nextAttemptAt: '2026-01-01T00:00:05.000Z',
      dueAt: '2026-01-01T00:00:05.000Z',
      enqueuedAt: RECORDED,
    });
    const held = given(
      enqueued(),
      claimed('c1', 1),
      e('work.heartbeat', { claimToken: 'c1', leaseUntil: '2026-01-01T00:02:00Z' }),
    );
    expect(held).toMatchObject({
      status: 'claimed',
      attempts: 1,
      claimToken: 'c1',
      owner: 'host-a',
      leaseUntil: '2026-01-01T00:02:00.000Z',
      nextAttemptAt: null,
      dueAt: RECORDED,
    });
    const done = given(
      enqueued(),
      claimed('c1', 1),
      e('work.sending', { claimToken: 'c1' }),
      e('work.succeeded', { claimToken: 'c1', externalRef: 'msg-9' }),
    );
    expect(done).toMatchObject({ status: 'succeeded', externalRef: 'msg-9', claimToken: null, owner: null });
    expect(done.leaseUntil).toBeNull();
  });

  it('schedules the next attempt from a failure or a retry resolution, and a claim starts it', () => {
    const failed = given(
      enqueued(),
      claimed('c1', 1),
      e('work.failed', { claimToken: 'c1', error: { code: 'http', message: '503' }, retryAt: '2026-01-01T00:10:00Z' }),
    );
    expect(failed).toMatchObject({
      status: 'retry_scheduled',
      lastError: { code: 'http', message: '503' },
      nextAttemptAt: '2026-01-01T00:10:00.000Z',
      dueAt: '2026-01-01T00:10:00.000Z',
    });
    const again = given(
      enqueued(),
      claimed('c1', 1),
      e('work.failed', { claimToken: 'c1', error: { code: 'http', message: '503' }, retryAt: '2026-01-01T00:10:00Z' }),
      claimed('c2', 2),
    );
    expect(again).toMatchObject({ status: 'claimed', attempts: 2, claimToken: 'c2', nextAttemptAt: null });
    expect(again.lastError).toEqual({ code: 'http', message: '503' });
    const resolved = given(
      enqueued(),
      claimed('c1', 1),
      e('work.sending', { claimToken: 'c1' }),
      e('work.lease_expired', { claimToken: 'c1', attempt: 1 }),
      e('work.resolved', { decision: 'retry', retryAt: '2026-01-01T00:20:00Z' }),
    );
    expect(resolved).toMatchObject({ status: 'retry_scheduled', nextAttemptAt: '2026-01-01T00:20:00.000Z' });
    const corrupt = given(enqueued(), e('work.corrupt', { detail: 'payload does not parse' }));
    expect(corrupt).toMatchObject({
      status: 'corrupt',
      lastError: { code: 'corrupt', message: 'payload does not parse' },
    });
  });

  it('a heartbeat or an outcome naming a stale claim token changes nothing, on both folds', () => {
    const base = [
      enqueued(),
      claimed('c1', 1),
      e('work.lease_expired', { claimToken: 'c1', attempt: 1 }),
      claimed('c2', 2),
    ];
    const before = given(...base);
    for (const stale of [
      e('work.heartbeat', { claimToken: 'c1', leaseUntil: '2026-01-01T00:09:00Z' }),
      e('work.running', { claimToken: 'c1' }),
      e('work.sending', { claimToken: 'c1' }),
      e('work.succeeded', { claimToken: 'c1' }),
      e('work.failed', { claimToken: 'c1', error: { code: 'x', message: 'late' } }),
      e('work.lease_expired', { claimToken: 'c1', attempt: 1 }),
      e('work.acknowledged', { claimToken: 'c1' }),
    ]) {
      expect(given(...base, stale)).toEqual(before);
      const [last] = recordGiven([stale], 'work', workId);
      expect(evolveWork(before, last!)).toBeUndefined();
    }
    expect(before).toMatchObject({ status: 'claimed', claimToken: 'c2', leaseUntil: '2026-01-01T00:01:00.000Z' });
    // The current token extends the lease; an acknowledgement of a settled item names its last claim freely.
    const extended = given(...base, e('work.heartbeat', { claimToken: 'c2', leaseUntil: '2026-01-01T00:03:00Z' }));
    expect(extended.leaseUntil).toBe('2026-01-01T00:03:00.000Z');
    const acked = given(
      ...base,
      e('work.succeeded', { claimToken: 'c2' }),
      e('work.acknowledged', { claimToken: 'c1' }),
    );
    expect(acked.status).toBe('acknowledged');
  });

  it('refuses what the machine refuses: strict throws naming the item, tolerant skips', () => {
    const [queued, heartbeat] = recordGiven(
      [enqueued(), e('work.heartbeat', { claimToken: 'c1', leaseUntil: RECORDED })],
      'work',
      workId,
    );
    const state = workFold.evolve(initialWorkFacts, queued!, workId);
    expect(() => workFold.evolve(state, heartbeat!, workId)).toThrow(IllegalTransitionError);
    expect(() => workFold.evolve(state, heartbeat!, workId)).toThrow(workId);
    expect(evolveWork(state, heartbeat!)).toBeUndefined();
    expect(evolveWork(initialWorkFacts, heartbeat!)).toBeUndefined();
  });
});
