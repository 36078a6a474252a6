import { describe, expect, it } from 'vitest';
import { planDue } from './missed-policy.js';

const h = (hour: number) => `2026-05-01T${String(hour).padStart(2, '0')}:00:00.000Z`;

describe('planDue', () => {
  it('fires on-time due times whatever the policy', () => {
    for (const policy of ['coalesce', 'skip', 'catch_up'] as const) {
      expect(planDue(policy, 10, { missed: [], missedTotal: 0, onTime: [h(9)] })).toMatchObject({
        fire: [h(9)],
        notFired: [],
        notFiredTotal: 0,
      });
    }
  });

  it('coalesce: one fire for everything missed, the latest, unless something fires on time anyway', () => {
    expect(planDue('coalesce', 10, { missed: [h(9), h(10), h(11)], missedTotal: 3, onTime: [] })).toEqual({
      fire: [h(11)],
      notFired: [h(9), h(10)],
      notFiredTotal: 2,
      reason: `missed: coalesce, so it was coalesced into the fire due at ${h(11)}`,
    });
    expect(planDue('coalesce', 10, { missed: [h(11)], missedTotal: 40, onTime: [h(12)] })).toMatchObject({
      fire: [h(12)],
      notFired: [h(11)],
      notFiredTotal: 40,
    });
  });

  it('skip: nothing missed fires', () => {
    expect(planDue('skip', 10, { missed: [h(11)], missedTotal: 3, onTime: [] })).toMatchObject({
      fire: [],
      notFired: [h(11)],
      notFiredTotal: 3,
    });
  });

  it('catch_up: the latest catch_up_limit missed due times fire, oldest first; older ones are skipped', () => {
    expect(planDue('catch_up', 2, { missed: [h(9), h(10), h(11)], missedTotal: 5, onTime: [h(12)] })).toEqual({
      fire: [h(10), h(11), h(12)],
      notFired: [h(9)],
      notFiredTotal: 3,
      reason: 'beyond catch_up_limit 2: only the latest 2 missed due times fire',
    });
    expect(planDue('catch_up', 10, { missed: [h(9), h(10)], missedTotal: 2, onTime: [] })).toMatchObject({
      fire: [h(9), h(10)],
      notFiredTotal: 0,
    });
  });
});
