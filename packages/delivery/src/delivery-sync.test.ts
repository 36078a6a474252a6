import type { RecordedEvent } from '@demiurge/contracts';
import { describe, expect, it } from 'vitest';
import { mirrorEvents, unknownHistory } from './delivery-sync.js';

const lease = '2026-01-01T00:01:00.000Z';
let position = 0;
const work = (type: string, data: Record<string, unknown> = {}): RecordedEvent => {
  position++;
  return {
    position,
    eventId: `evt_${position}`,
    streamType: 'work',
    streamId: 'wrk_1',
    streamVersion: position,
    type,
    schemaVersion: 1,
    data: { workId: 'wrk_1', ...data },
    meta: { actor: { kind: 'system', id: 'test' } },
    recordedAt: `2026-01-01T00:00:0${position}.000Z`,
  };
};

describe('a delivery reads its work item through the one work fold', () => {
  it('a late outcome naming a stale claim token is not why the send became unknown', () => {
    position = 0;
    const events = [
      work('work.enqueued', { kind: 'delivery.send', subjectId: 'dlv_1' }),
      work('work.claimed', { claimToken: 't1', attempt: 1, owner: 'a', leaseUntil: lease }),
      work('work.lease_expired', { claimToken: 't1', attempt: 1 }),
      work('work.claimed', { claimToken: 't2', attempt: 2, owner: 'b', leaseUntil: lease }),
      work('work.sending', { claimToken: 't2' }),
      work('work.unknown', { claimToken: 't1', reason: 'a late writer' }), // stale: changes nothing
      work('work.lease_expired', { claimToken: 't2', attempt: 2 }), // t2's send was cut: now it is unknown
    ];
    expect(unknownHistory({ state: 'sending', events: events.slice(0, 6) })).toEqual({
      reason: null,
      resolution: null,
    });
    const history = unknownHistory({ state: 'unknown', events });
    expect(history.reason).toBe(
      'the send was interrupted: its lease expired at 2026-01-01T00:00:07.000Z with no outcome recorded (a crash or a stall)',
    );
    expect(mirrorEvents('dlv_1', 'sending', { state: 'unknown', events })).toEqual([
      { type: 'delivery.unknown', data: { deliveryId: 'dlv_1', reason: history.reason } },
    ]);
  });
});
