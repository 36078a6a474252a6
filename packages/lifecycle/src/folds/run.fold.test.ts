import type { NewEvent } from '@demiurge/contracts';
import { describe, expect, it } from 'vitest';
import { IllegalTransitionError } from '../errors.js';
import { recordGiven } from '../testing/index.js';
import { evolveRun, initialRunFacts, type RunFacts, runFold } from './run.fold.js';

const runId = 'run_01JD5Y7Q6N0000000000000000';
const sessionId = 'ses_01JD5Y7Q6N0000000000000000';
const e = (type: string, data: Record<string, unknown> = {}): NewEvent => ({ type, data: { runId, ...data } });
const claimed = (owner: string, leaseToken: string, leaseUntil: string) =>
  e('run.owner_claimed', { owner, leaseToken, leaseUntil });

/** given (events) → then (the run), through the strict fold and the tolerant one alike. */
function given(...events: NewEvent[]): RunFacts {
  const recorded = recordGiven(events, 'run', runId);
  const strict = recorded.reduce((s, ev) => runFold.evolve(s, ev, runId), initialRunFacts);
  const tolerant = recorded.reduce<RunFacts>((s, ev) => evolveRun(s, ev) ?? s, initialRunFacts);
  expect(tolerant).toEqual(strict);
  return strict;
}

describe('the run fold', () => {
  it('follows a run: owner, lease, checkpoint, reasons', () => {
    expect(
      given(
        e('run.queued', { sessionId }),
        e('run.started', { owner: 'host-a', principal: { kind: 'user', id: 'cli:ann' } }),
        claimed('host-a', 'l1', '2026-01-01T00:01:00Z'),
        e('run.checkpointed', { checkpointId: 'chk_1', stage: 'model' }),
        e('run.blocked', { reason: 'needs input', resumable: true }),
      ),
    ).toEqual({
      status: 'blocked',
      runId,
      sessionId,
      principal: { kind: 'user', id: 'cli:ann' },
      owner: 'host-a',
      leaseToken: 'l1',
      leaseUntil: '2026-01-01T00:01:00.000Z',
      stage: 'model',
      checkpointId: 'chk_1',
      resumable: true,
      reason: 'needs input',
      error: null,
    });
  });

  it('a heartbeat or an expiry naming a stale lease token changes nothing', () => {
    const before = given(
      e('run.queued', { sessionId }),
      e('run.started', { owner: 'host-a' }),
      claimed('host-a', 'l1', '2026-01-01T00:01:00.000Z'),
      e('run.owner_lease_expired', { owner: 'host-a', leaseToken: 'l1' }),
      claimed('host-b', 'l2', '2026-01-01T00:02:00.000Z'),
    );
    const after = given(
      e('run.queued', { sessionId }),
      e('run.started', { owner: 'host-a' }),
      claimed('host-a', 'l1', '2026-01-01T00:01:00.000Z'),
      e('run.owner_lease_expired', { owner: 'host-a', leaseToken: 'l1' }),
      claimed('host-b', 'l2', '2026-01-01T00:02:00.000Z'),
      e('run.owner_heartbeat', { owner: 'host-a', leaseToken: 'l1', leaseUntil: '2026-01-01T00:09:00.000Z' }),
      e('run.owner_lease_expired', { owner: 'host-a', leaseToken: 'l1' }),
    );
    expect(after).toEqual(before);
    expect(after).toMatchObject({ owner: 'host-b', leaseToken: 'l2', leaseUntil: '2026-01-01T00:02:00.000Z' });
    const extended = given(
      e('run.queued', { sessionId }),
      claimed('host-b', 'l2', '2026-01-01T00:02:00.000Z'),
      e('run.owner_heartbeat', { owner: 'host-b', leaseToken: 'l2', leaseUntil: '2026-01-01T00:03:00Z' }),
    );
    expect(extended.leaseUntil).toBe('2026-01-01T00:03:00.000Z');
  });

  it('keeps resumable only while blocked, cancelled or archived; resumed clears the reason', () => {
    const resumed = given(
      e('run.queued', { sessionId }),
      e('run.started', { owner: 'h' }),
      e('run.blocked', { reason: 'r', resumable: true }),
      e('run.resumed'),
    );
    expect(resumed).toMatchObject({ status: 'running', resumable: null, reason: null });
    const failed = given(e('run.queued', { sessionId }), e('run.failed', { error: { code: 'x', message: 'boom' } }));
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'x', message: 'boom' } });
  });

  it('refuses what the machine refuses: strict throws naming the run, tolerant skips', () => {
    const [queued, again] = recordGiven([e('run.queued', { sessionId }), e('run.queued', { sessionId })], 'run', runId);
    const state = runFold.evolve(initialRunFacts, queued!, runId);
    expect(() => runFold.evolve(state, again!, runId)).toThrow(IllegalTransitionError);
    expect(evolveRun(state, again!)).toBeUndefined();
    expect(
      evolveRun(initialRunFacts, recordGiven([e('run.started', { owner: 'h' })], 'run', runId)[0]!),
    ).toBeUndefined();
  });
});
