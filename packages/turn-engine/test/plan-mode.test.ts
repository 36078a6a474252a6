import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Timers } from '@demiurge/contracts';
import { RunsCollections, runsProjector, type ToolCallView } from '@demiurge/projector-runs';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, openHarness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const write = { name: 'write_file', arguments: { path: 'plan.md', content: '# plan' } };

async function calls(harness: Harness): Promise<ToolCallView[]> {
  return harness.store.projection(runsProjector.name).list<ToolCallView>(RunsCollections.toolCalls);
}

describe('plan mode', () => {
  it('denies a write with a structured result naming the policy and the ways on; reads stay allowed', async () => {
    h = await openHarness({
      script: [
        {
          tool_calls: [
            write,
            { name: 'list_dir', arguments: { path: '.' } },
            { name: 'shell', arguments: { command: 'ls' } },
          ],
        },
        { content: 'planned' },
      ],
    });
    const { sessionId } = await h.sessions.create({ title: 't', coreId: 'default', mode: 'plan' });
    const outcome = await h.engine.runTurn({ sessionId, text: 'make a plan' });
    expect(outcome.status).toBe('completed');
    expect(existsSync(join(h.workspace, 'plan.md'))).toBe(false);
    const [denied, listed, ls] = await calls(h);
    expect(denied).toMatchObject({ tool: 'write_file', status: 'denied', denial: { policy: 'plan_mode' } });
    expect(listed!.status).toBe('succeeded');
    expect(ls!.status).toBe('succeeded'); // a read-only shell command is a read
    // The tool stayed visible, and the model got the denial as a structured result.
    const request = h.provider.requests[1]!;
    expect(request.tools.map((t) => t.name)).toContain('write_file');
    const result = JSON.parse(request.messages.find((m) => m.role === 'tool')!.content);
    expect(result).toMatchObject({ denied: true, policy: 'plan_mode' });
    expect(result.reason).toMatch(/approve this exact call/);
    expect(result.continue_with).toContain('exit plan mode');
    expect(await h.verify()).toEqual([]);
  });

  it('an approval for that exact call lets it run once; other arguments and a second use are denied', async () => {
    h = await openHarness({
      script: [
        { tool_calls: [{ name: 'write_file', arguments: { content: '# plan', path: 'plan.md' } }] },
        { tool_calls: [{ ...write, arguments: { path: 'other.md', content: 'x' } }, write] },
        { content: 'done' },
      ],
    });
    const { sessionId } = await h.sessions.create({ title: 't', coreId: 'default', mode: 'plan' });
    const approvalId = await h.approvals.preApprove({
      sessionId,
      tool: 'write_file',
      arguments: write.arguments,
      reason: 'the user agreed to the plan file',
      actor: { kind: 'operator', id: 'alice' },
      expiresAt: new Date(h.clock.now() + 60_000).toISOString(),
    });
    await h.engine.runTurn({ sessionId, text: 'write the plan' });
    expect(readFileSync(join(h.workspace, 'plan.md'), 'utf8')).toBe('# plan');
    expect((await calls(h)).map((c) => c.status)).toEqual(['succeeded', 'denied', 'denied']);
    expect((await h.approvals.get(approvalId)).status).toBe('consumed');
    expect(await h.verify()).toEqual([]);
  });

  it('an expired approval does not count', async () => {
    h = await openHarness({ script: [{ tool_calls: [write] }, { content: 'done' }] });
    const { sessionId } = await h.sessions.create({ title: 't', coreId: 'default', mode: 'plan' });
    const approvalId = await h.approvals.preApprove({
      sessionId,
      tool: 'write_file',
      arguments: write.arguments,
      reason: 'ok',
      actor: { kind: 'operator', id: 'alice' },
      expiresAt: new Date(h.clock.now() + 1_000).toISOString(),
    });
    h.clock.advance(5_000);
    await h.engine.runTurn({ sessionId, text: 'write' });
    expect((await calls(h)).map((c) => c.status)).toEqual(['denied']);
    expect((await h.approvals.get(approvalId)).status).toBe('expired');
  });

  it('with onPlanModeWrite=ask the run waits for an approval; granted runs the call, denied returns a denial', async () => {
    h = await openHarness({
      script: [
        { tool_calls: [write] },
        { tool_calls: [{ ...write, arguments: { path: 'b.md', content: 'b' } }] },
        { content: 'done' },
      ],
      onPlanModeWrite: 'ask',
    });
    const { sessionId } = await h.sessions.create({ title: 't', coreId: 'default', mode: 'plan' });
    const answered: string[] = [];
    const sub = h.store.events$.subscribe((event) => {
      if (event.type !== 'approval.requested') return;
      const approvalId = (event.data as { approvalId: string }).approvalId;
      const first = answered.length === 0;
      answered.push(approvalId);
      void (async () => {
        const run = await h!.runs.get((event.data as { runId: string }).runId);
        expect(run.state).toBe('waiting');
        if (first) await h!.approvals.grant(approvalId, { kind: 'operator', id: 'alice' }, 'fine');
        else await h!.approvals.deny(approvalId, { kind: 'operator', id: 'alice' }, 'no');
      })();
    });
    const outcome = await h.engine.runTurn({ sessionId, text: 'write' });
    sub.unsubscribe();
    expect(outcome.status).toBe('completed');
    expect(answered).toHaveLength(2);
    expect(existsSync(join(h.workspace, 'plan.md'))).toBe(true);
    expect(existsSync(join(h.workspace, 'b.md'))).toBe(false);
    expect((await calls(h)).map((c) => c.status)).toEqual(['succeeded', 'denied']);
    const types = await h.types();
    expect(types.filter((t) => t === 'run.waiting')).toHaveLength(2);
    expect(types.filter((t) => t === 'run.resumed')).toHaveLength(2);
    expect(await h.verify()).toEqual([]);
  });

  it("an unanswered approval expires when the engine's timers say so (the injected Timers port, not the wall clock)", async () => {
    const set: { ms: number; fire: () => void }[] = [];
    const timers: Timers = {
      after: (ms, fire) => {
        set.push({ ms, fire });
        return () => undefined;
      },
    };
    h = await openHarness({
      script: [{ tool_calls: [write] }, { content: 'done' }],
      onPlanModeWrite: 'ask',
      approvalTtlMs: 60_000,
      timers,
    });
    const { sessionId } = await h.sessions.create({ title: 't', coreId: 'default', mode: 'plan' });
    const requested = new Promise<void>((resolve) => {
      const sub = h!.store.events$.subscribe((e) => {
        if (e.type !== 'approval.requested') return;
        sub.unsubscribe();
        resolve();
      });
    });
    const outcome = h.engine.runTurn({ sessionId, text: 'write' });
    await requested;
    for (let i = 0; i < 500 && !set.some((t) => t.ms === 60_000); i++) await new Promise((r) => setTimeout(r, 10));
    const expiry = set.find((t) => t.ms === 60_000);
    expect(expiry).toBeDefined();
    h.clock.advance(60_000);
    expiry?.fire();
    expect((await outcome).status).toBe('completed');
    expect((await calls(h)).map((c) => c.status)).toEqual(['denied']);
    expect(existsSync(join(h.workspace, 'plan.md'))).toBe(false);
    const types = await h.types();
    expect(types.filter((t) => t === 'approval.expired')).toHaveLength(1);
    expect(await h.verify()).toEqual([]);
  });

  it('leaving plan mode lets writes run', async () => {
    h = await openHarness({ script: [{ tool_calls: [write] }, { content: 'done' }] });
    const { sessionId } = await h.sessions.create({ title: 't', coreId: 'default', mode: 'plan' });
    await h.sessions.setMode(sessionId, 'default');
    await h.engine.runTurn({ sessionId, text: 'write' });
    expect(existsSync(join(h.workspace, 'plan.md'))).toBe(true);
  });
});
