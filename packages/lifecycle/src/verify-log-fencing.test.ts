import { describe, expect, it } from 'vitest';
import { recordLog } from '../test/support.js';
import { verifyLog } from './index.js';

const lease = '2026-01-01T00:01:00.000Z';
const work = (type: string, data: Record<string, unknown> = {}) => ({
  streamType: 'work',
  streamId: 'w1',
  type,
  data: { workId: 'w1', ...data },
});
const run = (type: string, data: Record<string, unknown> = {}) => ({
  streamType: 'run',
  streamId: 'r1',
  type,
  data: { runId: 'r1', ...data },
});

/** A send claimed by t1, expired and claimed again by t2 (sending), then a late outcome of t1, then t2's. */
const lateOutcome = [
  work('work.enqueued', { kind: 'delivery.send', subjectId: 'd1' }),
  work('work.claimed', { claimToken: 't1', attempt: 1, owner: 'a', leaseUntil: lease }),
  work('work.lease_expired', { claimToken: 't1', attempt: 1 }),
  work('work.claimed', { claimToken: 't2', attempt: 2, owner: 'b', leaseUntil: lease }),
  work('work.sending', { claimToken: 't2' }),
  work('work.unknown', { claimToken: 't1', reason: 'a late writer' }),
  work('work.succeeded', { claimToken: 't2' }),
];

describe('verifyLog with the folds’ fencing', () => {
  it('flags an outcome naming a stale claim token, as stale_token at its position, and reads on as the folds do', async () => {
    const report = await verifyLog(recordLog(lateOutcome), { fencing: true });
    expect(report.violations).toEqual([
      expect.objectContaining({
        kind: 'stale_token',
        position: 6,
        state: 'sending',
        event: 'work.unknown',
        message:
          'position 6 (work w1 v6): work.unknown names a claim token that no longer holds work w1; it changes nothing',
      }),
    ]);
  });

  it('without fencing the machines alone take the late outcome and blame the next, legitimate event', async () => {
    const report = await verifyLog(recordLog(lateOutcome));
    expect(report.violations.map((v) => [v.kind, v.position, v.event])).toEqual([
      ['illegal_transition', 7, 'work.succeeded'],
    ]);
  });

  it('flags a run heartbeat or expiry naming a lease token that no longer holds the run', async () => {
    const log = recordLog([
      run('run.queued', { sessionId: 's1' }),
      run('run.started', { owner: 'a' }),
      run('run.owner_claimed', { owner: 'a', leaseToken: 'l1', leaseUntil: lease }),
      run('run.owner_heartbeat', { owner: 'a', leaseToken: 'l1', leaseUntil: lease }),
      run('run.owner_lease_expired', { owner: 'a', leaseToken: 'l1' }),
      run('run.owner_claimed', { owner: 'b', leaseToken: 'l2', leaseUntil: lease }),
      run('run.owner_heartbeat', { owner: 'a', leaseToken: 'l1', leaseUntil: lease }),
      run('run.owner_heartbeat', { owner: 'b', leaseToken: 'l2', leaseUntil: lease }),
    ]);
    const report = await verifyLog(log, { fencing: true });
    expect(report.violations.map((v) => [v.kind, v.position, v.event])).toEqual([
      ['stale_token', 7, 'run.owner_heartbeat'],
    ]);
    expect((await verifyLog(log)).violations).toEqual([]);
  });
});
