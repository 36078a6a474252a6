import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RecordedEvent } from '@demiurge/contracts';
import { hostProjectors, openHostStore, storePath } from '@demiurge/host';
import { describe, expect, it } from 'vitest';
import { runScenario, type SimAction } from '../src/index.js';

/** Runs a scripted scenario, keeps its home, and reads its log back. */
async function logOf(actions: SimAction[], core?: string) {
  const result = await runScenario(7, actions, { keep: true, ...(core ? { core } : {}) });
  const home = result.home ?? '';
  const store = await openHostStore(
    { kind: 'sqlite', path: storePath(home), synchronous: 'NORMAL' },
    { projectors: hostProjectors },
  );
  const events: RecordedEvent[] = [];
  for await (const e of store.iterate()) events.push(e);
  await store.close();
  rmSync(home, { recursive: true, force: true });
  return { result, events, by: (type: string) => events.filter((e) => e.type === type) };
}

const hangingTool: SimAction = { kind: 'submit', tools: ['hang'], provider: null };

describe('scripted faults through the simulator', () => {
  it('a host crash while a non-idempotent tool runs: the next host records it unknown, never runs it again, and finishes the turn', async () => {
    const { result, by } = await logOf([
      hangingTool,
      { kind: 'crash', restart: 'same' },
      { kind: 'advance', ms: 31_000 },
      { kind: 'recover' },
      { kind: 'dispatch', sink: 'ok' },
    ]);
    expect(result.failure).toBeUndefined();
    expect(by('tool_call.started')).toHaveLength(1);
    expect(by('tool_call.unknown').map((e) => e.meta.actor?.id)).toEqual(['sim-host-2']);
    expect(by('run.completed')).toHaveLength(1);
    expect(by('delivery.sent')).toHaveLength(1);
  });

  it('a cut-off host whose tool call comes back after a second host took over writes nothing (its lease is fenced)', async () => {
    const { result, events } = await logOf([
      hangingTool,
      { kind: 'crash', restart: 'second' },
      { kind: 'advance', ms: 31_000 },
      { kind: 'recover' },
      // The second host crashes: every hanging call is let go, the cut-off first host's too (its store is open).
      { kind: 'crash', restart: 'same' },
    ]);
    expect(result.failure).toBeUndefined();
    const takeover = events.findIndex((e) => e.type === 'run.owner_claimed' && e.meta.actor?.id === 'sim-host-2');
    expect(takeover).toBeGreaterThan(0);
    expect(events.slice(takeover).filter((e) => e.meta.actor?.id === 'sim-host-1')).toEqual([]);
  });

  it('a provider error fails the turn; a provider hang is cancelled by the operator', async () => {
    const failed = await logOf([{ kind: 'submit', tools: [], provider: { kind: 'error', atStep: 0 } }]);
    expect(failed.result.failure).toBeUndefined();
    expect(failed.by('turn.failed')).toHaveLength(1);
    const cancelled = await logOf([
      { kind: 'submit', tools: [], provider: { kind: 'hang', atStep: 0 } },
      { kind: 'cancel', pick: 0 },
    ]);
    expect(cancelled.result.failure).toBeUndefined();
    expect(cancelled.by('run.cancelled')).toHaveLength(1);
  });

  it('a process killed by a signal fails its task; one that hangs past its timeout fails it when the virtual clock passes it', async () => {
    const { result, by } = await logOf([
      { kind: 'submit', tools: [], provider: null },
      { kind: 'task', outcome: 'crash' },
      { kind: 'task', outcome: 'slow' },
      { kind: 'advance', ms: 31_000 },
    ]);
    expect(result.failure).toBeUndefined();
    const codes = () => by('task.failed').map((e) => (e.data as { error: { code: string } }).error.code);
    expect(codes()).toEqual(['killed_by_signal']);
    const late = await logOf([
      { kind: 'submit', tools: [], provider: null },
      { kind: 'task', outcome: 'slow' },
      { kind: 'advance', ms: 3_600_000 },
    ]);
    expect(late.result.failure).toBeUndefined();
    const failed = late.by('task.failed');
    expect(failed.map((e) => (e.data as { error: { code: string } }).error.code)).toEqual(['timed_out']);
  });

  it('an ambiguous send becomes unknown and is never sent again until the operator resolves it', async () => {
    const { result, by } = await logOf([
      { kind: 'submit', tools: [], provider: null },
      { kind: 'dispatch', sink: 'ambiguous' },
      { kind: 'advance', ms: 3_600_000 },
      { kind: 'dispatch', sink: 'ok' },
      { kind: 'resolve' },
    ]);
    expect(result.failure).toBeUndefined();
    expect(by('delivery.unknown')).toHaveLength(1);
    expect(by('delivery.sending')).toHaveLength(1);
    expect(by('delivery.resolved').map((e) => (e.data as { decision: string }).decision)).toEqual(['sent']);
  });

  it('plan mode: the external tool waits for the operator; granted it runs once, denied it never runs', async () => {
    const planned: SimAction = { kind: 'submit', tools: ['ok'], provider: null, plan: true };
    const granted = await logOf([planned, { kind: 'approve', pick: 0, grant: true }]);
    expect(granted.result.failure).toBeUndefined();
    expect(granted.by('approval.requested')).toHaveLength(1);
    expect(granted.by('approval.granted')).toHaveLength(1);
    expect(granted.by('tool_call.succeeded')).toHaveLength(1);
    expect(granted.by('run.completed')).toHaveLength(1);
    const denied = await logOf([planned, { kind: 'approve', pick: 0, grant: false }]);
    expect(denied.result.failure).toBeUndefined();
    expect(denied.by('tool_call.denied')).toHaveLength(1);
    expect(denied.by('tool_call.started')).toHaveLength(0);
    // A crash while it waits: the next host finds the run waiting on the same approval, and the grant still works.
    const crashed = await logOf([
      planned,
      { kind: 'crash', restart: 'same' },
      { kind: 'advance', ms: 31_000 },
      { kind: 'recover' },
      { kind: 'approve', pick: 0, grant: true },
    ]);
    expect(crashed.result.failure).toBeUndefined();
    expect(crashed.by('approval.requested')).toHaveLength(1);
    expect(crashed.by('tool_call.succeeded')).toHaveLength(1);
  });

  it("a core's schedule fires once at its virtual due time, its turn runs, and a crash in between loses nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'demiurge-sim-core-'));
    try {
      const core = join(dir, 'core');
      cpSync(join(import.meta.dirname, '..', '..', '..', 'agent'), core, { recursive: true });
      mkdirSync(join(core, 'schedules'));
      writeFileSync(join(core, 'schedules', 'hourly.yaml'), 'cron: "0 * * * *"\nprompt: the hourly check\n');
      const actions: SimAction[] = [
        { kind: 'submit', tools: [], provider: null },
        { kind: 'schedule' },
        { kind: 'advance', ms: 3_600_000 },
        { kind: 'crash', restart: 'same' },
        { kind: 'schedule' },
        { kind: 'schedule' },
      ];
      const { result, by } = await logOf(actions, core);
      expect(result.failure).toBeUndefined();
      expect((await runScenario(7, actions, { core })).hash).toBe(result.hash);
      expect(by('schedule_instance.completed')).toHaveLength(1);
      expect(by('turn.completed')).toHaveLength(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}, 600_000);
