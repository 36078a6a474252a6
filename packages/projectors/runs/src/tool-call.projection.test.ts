import { describe, expect, it } from 'vitest';
import { setup, T0, T1 } from '../test/setup.js';
import { RunsCollections, stepKey, type ToolCallView, turnPrefix, turnToolCallKey } from './index.js';

describe('runs projector: tool calls', () => {
  it("records a call from request to output, and lists a turn's calls in step order (s2 before s10)", async () => {
    const { ids, reader, sessionId, append, request } = setup();
    const turnId = ids.next('trn');
    const runId = ids.next('run');
    const s10 = await request(turnId, 's10');
    const s2 = await request(turnId, 's2', { runId, arguments: { path: 'a.txt' }, effect: 'read' });
    const s1 = await request(turnId, 's1', { tool: 'shell', idempotent: false });
    const elsewhere = await request(ids.next('trn'), 's3');
    expect(await reader.list<string>(RunsCollections.toolCallsByTurn, { prefix: turnPrefix(turnId) })).toEqual([
      s1,
      s2,
      s10,
    ]);
    expect(await reader.list<string>(RunsCollections.toolCallsByTurn)).toContain(elsewhere);
    expect(turnToolCallKey(turnId, 's2', s2)).toBe(`${turnId}/s0002/${s2}`);

    await append(
      'tool_call',
      s2,
      { type: 'tool_call.started', data: { toolCallId: s2 } },
      { type: 'tool_call.succeeded', data: { toolCallId: s2, output: 'hello', resultRef: 'art_1' } },
    );
    expect(await reader.get<ToolCallView>(RunsCollections.toolCalls, s2)).toEqual({
      toolCallId: s2,
      sessionId,
      turnId,
      runId,
      stepId: 's2',
      tool: 'fs.read',
      effect: 'read',
      idempotent: true,
      arguments: { path: 'a.txt' },
      status: 'succeeded',
      output: 'hello',
      error: null,
      denial: null,
      reason: null,
      resolution: null,
      requestedAt: T0,
      updatedAt: T0,
    });
    expect(await reader.get<ToolCallView>(RunsCollections.toolCalls, s10)).toMatchObject({
      runId: null,
      effect: null,
      arguments: null,
      status: 'requested',
    });
  });

  it('keeps a denial with its policy, and settles an unknown outcome by resolution', async () => {
    const { ids, clock, reader, append, request } = setup();
    const turnId = ids.next('trn');
    const denied = await request(turnId, 's1', { tool: 'fs.write', idempotent: false });
    const lost = await request(turnId, 's2', { tool: 'shell', idempotent: false });
    await append('tool_call', denied, {
      type: 'tool_call.denied',
      data: { toolCallId: denied, policy: 'plan-mode', reason: 'writes are off in plan mode; ask to leave it' },
    });
    expect(await reader.get<ToolCallView>(RunsCollections.toolCalls, denied)).toMatchObject({
      status: 'denied',
      denial: { policy: 'plan-mode', reason: 'writes are off in plan mode; ask to leave it' },
      output: null,
    });

    await append(
      'tool_call',
      lost,
      { type: 'tool_call.started', data: { toolCallId: lost } },
      { type: 'tool_call.unknown', data: { toolCallId: lost, reason: 'host crashed mid-call' } },
    );
    expect(await reader.get<ToolCallView>(RunsCollections.toolCalls, lost)).toMatchObject({
      status: 'unknown',
      reason: 'host crashed mid-call',
      resolution: null,
    });
    clock.advance(1000);
    await append('tool_call', lost, {
      type: 'tool_call.resolved',
      data: { toolCallId: lost, decision: 'succeeded', note: 'the file is there' },
    });
    expect(await reader.get<ToolCallView>(RunsCollections.toolCalls, lost)).toMatchObject({
      status: 'succeeded',
      reason: 'host crashed mid-call',
      resolution: 'succeeded',
      updatedAt: T1,
    });
    // A second outcome is refused by the machine: the call keeps its resolution.
    await append('tool_call', lost, {
      type: 'tool_call.failed',
      data: { toolCallId: lost, error: { code: 'exit', message: 'exit 1' } },
    });
    expect(await reader.get<ToolCallView>(RunsCollections.toolCalls, lost)).toMatchObject({
      status: 'succeeded',
      error: null,
    });
  });

  it('ignores events of calls never requested', async () => {
    const { ids, reader, append } = setup();
    const ghost = ids.next('tcl');
    await append(
      'tool_call',
      ghost,
      { type: 'tool_call.started', data: { toolCallId: ghost } },
      { type: 'tool_call.succeeded', data: { toolCallId: ghost, output: 'boo' } },
    );
    expect(await reader.dump()).toEqual({});
  });

  it('pads the number of a step id so keys sort numerically', () => {
    expect(['s10', 's2', 's1', 's100'].map(stepKey).sort()).toEqual(['s0001', 's0002', 's0010', 's0100']);
    expect(stepKey('s2') < stepKey('s10')).toBe(true);
    expect(stepKey('step-1')).toBe('step-0001');
    expect(stepKey('final')).toBe('final');
  });
});
