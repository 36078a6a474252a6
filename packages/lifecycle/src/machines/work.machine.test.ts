import { describe, expect, it } from 'vitest';
import { allowedEvents, nextState } from '../index.js';
import { workLifecycle } from './work.machine.js';

const retryAt = '2026-01-01T00:05:00.000Z';

describe('work item machine', () => {
  it('never claims sending work again', () => {
    expect(allowedEvents(workLifecycle, 'sending')).not.toContain('work.claimed');
    expect(nextState(workLifecycle, 'sending', 'work.claimed')).toBeUndefined();
  });

  it('is claimable only from queued and retry_scheduled', () => {
    const claimable = workLifecycle.states.filter((s) => nextState(workLifecycle, s, 'work.claimed') !== undefined);
    expect(claimable).toEqual(['queued', 'retry_scheduled']);
  });

  it('reschedules claimed or running work when its lease expires, and makes sending work unknown', () => {
    expect(nextState(workLifecycle, 'claimed', 'work.lease_expired')).toBe('retry_scheduled');
    expect(nextState(workLifecycle, 'running', 'work.lease_expired')).toBe('retry_scheduled');
    expect(nextState(workLifecycle, 'sending', 'work.lease_expired')).toBe('unknown');
  });

  it('retries a failure that carries retryAt and fails one that does not (a guard on the event data)', () => {
    for (const from of ['claimed', 'running', 'sending'] as const) {
      expect(nextState(workLifecycle, from, { type: 'work.failed', data: { retryAt } })).toBe('retry_scheduled');
      expect(
        nextState(workLifecycle, from, { type: 'work.failed', data: { error: { code: 'x', message: 'y' } } }),
      ).toBe('failed');
    }
  });

  it('leaves unknown only through an operator decision', () => {
    expect(allowedEvents(workLifecycle, 'unknown')).toEqual(['work.resolved']);
    expect(nextState(workLifecycle, 'unknown', { type: 'work.resolved', data: { decision: 'sent' } })).toBe(
      'succeeded',
    );
    expect(nextState(workLifecycle, 'unknown', { type: 'work.resolved', data: { decision: 'failed' } })).toBe('failed');
    expect(nextState(workLifecycle, 'unknown', { type: 'work.resolved', data: { decision: 'retry' } })).toBe(
      'retry_scheduled',
    );
    expect(nextState(workLifecycle, 'unknown', { type: 'work.resolved', data: { decision: 'maybe' } })).toBeUndefined();
  });
});
