import { describe, expect, it } from 'vitest';
import { runScenario, type SimAction, simulate } from '../src/index.js';

// Turns with tools (one hanging), a detached task, failed, timed-out and ambiguous sends, a crash and a
// takeover, a clock jump and recovery: most of what a seed can do, in one scenario.
const rich: SimAction[] = [
  { kind: 'submit', tools: ['ok', 'fail'], provider: null },
  { kind: 'task', outcome: 'ok' },
  { kind: 'dispatch', sink: 'fail' },
  { kind: 'submit', tools: ['hang'], provider: null },
  { kind: 'dispatch', sink: 'ambiguous' },
  { kind: 'crash', restart: 'second' },
  { kind: 'advance', ms: 3_600_000 },
  { kind: 'recover' },
  { kind: 'dispatch', sink: 'ok' },
  { kind: 'resolve' },
];

// The operator's pause and resume across a crash, and an approval nobody answers expiring on the virtual clock.
const operator: SimAction[] = [
  { kind: 'submit', tools: ['ok'], provider: null, plan: true },
  { kind: 'submit', tools: ['hang'], provider: null },
  { kind: 'pause', pick: 1 },
  { kind: 'crash', restart: 'same' },
  { kind: 'advance', ms: 3_600_000 },
  { kind: 'resume', pick: 0 },
  { kind: 'dispatch', sink: 'ok' },
];

describe('the same seed gives the same log', () => {
  it('two runs of one seed give the same log hash, byte for byte; other seeds differ', async () => {
    const a = await runScenario(1, rich);
    const b = await runScenario(1, rich);
    expect(a.failure).toBeUndefined();
    expect(a.events).toBeGreaterThan(20);
    expect(b.hash).toBe(a.hash);
    expect(b.events).toBe(a.events);
    // Another seed: other ids, so another log.
    const other = await runScenario(2, rich);
    expect(other.failure).toBeUndefined();
    expect(other.events).toBe(a.events);
    expect(other.hash).not.toBe(a.hash);
  });

  it('with pauses, resumes and an approval expiring: the same hash twice', async () => {
    const a = await runScenario(3, operator);
    expect(a.failure).toBeUndefined();
    expect(a.eventTypes['run.paused']).toBe(1);
    expect(a.eventTypes['approval.expired']).toBe(1);
    expect(a.eventTypes['run.completed']).toBe(2);
    expect((await runScenario(3, operator)).hash).toBe(a.hash);
  });

  it('a batch gives each run and the whole batch the same hash every time', async () => {
    const first = await simulate({ seeds: 4, seed: 5 });
    const again = await simulate({ seeds: 4, seed: 5 });
    expect(first.ok).toBe(true);
    expect(again.hash).toBe(first.hash);
    expect(again.runs.map((r) => r.hash)).toEqual(first.runs.map((r) => r.hash));
    const shifted = await simulate({ seeds: 4, seed: 6 });
    expect(shifted.hash).not.toBe(first.hash);
  });
}, 600_000);
