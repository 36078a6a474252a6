import { describe, expect, it } from 'vitest';
import { SWEEP_SCENARIO_NAMES } from '../commands/sweep.command.js';
import { SCENARIOS } from './scenarios.js';

describe('demiurge sweep scenarios', () => {
  it('offers exactly the scripted scenarios (--scenario choices, named in the light command definition)', () => {
    expect([...SWEEP_SCENARIO_NAMES].sort()).toEqual(SCENARIOS.map((s) => s.name).sort());
  });
});
