import { rmSync } from 'node:fs';
import type { RecordedEvent } from '@demiurge/contracts';
import { hostProjectors, openHostStore, storePath } from '@demiurge/host';
import { describe, expect, it } from 'vitest';
import { runScenario, SIM_EPOCH, type SimAction } from '../src/index.js';

// The operator's pause and resume, and an approval nobody answers, through the simulator: each scenario runs
// the real host with every check after every step, then its log is read back.
async function logOf(actions: SimAction[]) {
  const result = await runScenario(11, actions, { keep: true });
  const home = result.home ?? '';
  const store = await openHostStore(
    { kind: 'sqlite', path: storePath(home), synchronous: 'NORMAL' },
    { projectors: hostProjectors },
  );
  const events: RecordedEvent[] = [];
  for await (const e of store.iterate()) events.push(e);
  await store.close();
  rmSync(home, { recursive: true, force: true });
  const by = (type: string) => events.filter((e) => e.type === type);
  const at = (type: string) => events.findIndex((e) => e.type === type);
  return { result, events, by, at };
}

const planned: SimAction = { kind: 'submit', tools: ['ok'], provider: null, plan: true };
const pause: SimAction = { kind: 'pause', pick: 0 };
const resume: SimAction = { kind: 'resume', pick: 0 };

describe('operator pause and resume', () => {
  it('a run paused while it waits for an approval: granted meanwhile, its call starts only after the resume, once', async () => {
    const { result, by, at } = await logOf([planned, pause, { kind: 'approve', pick: 0, grant: true }, resume]);
    expect(result.failure).toBeUndefined();
    expect(by('run.paused')).toHaveLength(1);
    expect(by('approval.granted')).toHaveLength(1);
    expect(by('tool_call.started')).toHaveLength(1);
    expect(at('tool_call.started')).toBeGreaterThan(at('run.resumed'));
    expect(by('tool_call.succeeded')).toHaveLength(1);
    expect(by('run.completed')).toHaveLength(1);
  });

  it('a paused run stays paused across a crash, a restart and a recovery round; resumed, the new host continues it exactly once', async () => {
    const hanging: SimAction = { kind: 'submit', tools: ['hang'], provider: null };
    const { result, events, by, at } = await logOf([
      hanging,
      pause,
      { kind: 'crash', restart: 'same' },
      { kind: 'advance', ms: 31_000 },
      { kind: 'recover' },
      resume,
    ]);
    expect(result.failure).toBeUndefined();
    const resumed = at('run.resumed');
    expect(resumed).toBeGreaterThan(at('run.paused'));
    // Nothing moved the run between the pause and the resume: no claim by the second host, no step.
    const between = events.slice(at('run.paused') + 1, resumed).filter((e) => e.meta.runId !== undefined);
    expect(between.map((e) => e.type)).toEqual([]);
    // Then the second host claims it once, records the call that ran under the dead host unknown (never again),
    // and finishes the turn once.
    const after = events.slice(resumed);
    expect(after.filter((e) => e.type === 'run.owner_claimed').map((e) => e.meta.actor?.id)).toEqual(['sim-host-2']);
    expect(by('tool_call.started')).toHaveLength(1);
    expect(by('tool_call.unknown').map((e) => e.meta.actor?.id)).toEqual(['sim-host-2']);
    expect(by('turn.completed')).toHaveLength(1);
    expect(by('run.completed')).toHaveLength(1);
  });

  it('a paused run is cancelled: nothing starts, the run and its call settle as cancelled', async () => {
    const { result, by } = await logOf([
      planned,
      pause,
      { kind: 'approve', pick: 0, grant: true }, // the call waits at the pause, not started
      { kind: 'cancel', pick: 0 },
      resume, // refused: the run is cancelled
    ]);
    expect(result.failure).toBeUndefined();
    expect(by('run.cancelled')).toHaveLength(1);
    expect(by('tool_call.started')).toHaveLength(0);
    expect(by('run.resumed')).toHaveLength(0);
  });
});

describe('an approval nobody answers expires on the virtual clock', () => {
  it('advancing past its 15 minutes expires it through the approval machine; the call is denied and the turn finishes', async () => {
    const { result, by } = await logOf([planned, { kind: 'advance', ms: 31_000 }, { kind: 'advance', ms: 3_600_000 }]);
    expect(result.failure).toBeUndefined();
    expect(by('approval.requested')).toHaveLength(1);
    const [expired] = by('approval.expired');
    expect(expired?.recordedAt).toBe(new Date(SIM_EPOCH + 31_000 + 3_600_000).toISOString());
    expect(by('tool_call.denied')).toHaveLength(1);
    expect(by('tool_call.started')).toHaveLength(0);
    expect(by('run.completed')).toHaveLength(1);
  });

  it('after a crash, the next host waits out what is left of it and expires it', async () => {
    const { result, by } = await logOf([
      planned,
      { kind: 'crash', restart: 'same' },
      { kind: 'advance', ms: 5_000 },
      { kind: 'advance', ms: 3_600_000 },
    ]);
    expect(result.failure).toBeUndefined();
    expect(by('approval.expired')).toHaveLength(1);
    expect(by('tool_call.denied').map((e) => e.meta.actor?.id)).toEqual(['sim-host-2']);
    expect(by('run.completed')).toHaveLength(1);
  });
});
