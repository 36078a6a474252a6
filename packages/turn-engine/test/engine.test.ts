import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunsCollections, runsProjector, type ToolCallView } from '@demiurge/projector-runs';
import { afterEach, describe, expect, it } from 'vitest';
import { loadTurn } from '../src/index.js';
import { type Harness, openHarness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function toolCalls(harness: Harness): Promise<ToolCallView[]> {
  return harness.store.projection(runsProjector.name).list<ToolCallView>(RunsCollections.toolCalls);
}

describe('TurnEngine', () => {
  it('runs a turn with tool calls end to end, every fact in the log', async () => {
    h = await openHarness({
      script: [
        {
          content: 'Writing the file.',
          tool_calls: [
            { name: 'write_file', arguments: { path: 'notes/a.txt', content: 'hello' } },
            { name: 'read_file', arguments: { path: 'notes/a.txt' } },
          ],
        },
        { content: 'Done: notes/a.txt says hello.' },
      ],
    });
    const session = await h.sessions.create({ title: 't', coreId: 'default' });
    const outcome = await h.engine.runTurn({ sessionId: session.sessionId, text: 'write a note' });

    expect(outcome).toMatchObject({ status: 'completed', text: 'Done: notes/a.txt says hello.', steps: 2 });
    expect(readFileSync(join(h.workspace, 'notes/a.txt'), 'utf8')).toBe('hello');
    const calls = await toolCalls(h);
    expect(calls.map((c) => [c.tool, c.status, c.stepId])).toEqual([
      ['write_file', 'succeeded', 's1'],
      ['read_file', 'succeeded', 's1'],
    ]);
    expect(calls[1]!.output).toContain('hello');
    // The second model round saw both tool results.
    const second = h.provider.requests[1]!.messages;
    expect(second.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      expect.stringContaining('notes/a.txt'),
      expect.stringContaining('hello'),
    ]);
    const history = await h.sessions.history(session.sessionId);
    expect(history.map((m) => [m.role, m.text])).toEqual([
      ['user', 'write a note'],
      ['assistant', 'Done: notes/a.txt says hello.'],
    ]);
    const types = await h.types();
    expect(types).toEqual(
      expect.arrayContaining([
        'turn.started',
        'turn.model_responded',
        'tool_call.started',
        'turn.completed',
        'run.completed',
      ]),
    );
    expect(types.indexOf('tool_call.requested')).toBeGreaterThan(types.indexOf('turn.started'));
    expect(await h.verify()).toEqual([]);
  });

  it('continues the fake script across turns and echoes when it is used up', async () => {
    h = await openHarness({ script: [{ content: 'first answer' }] });
    const { sessionId } = await h.sessions.create({ title: 't', coreId: 'default' });
    expect((await h.engine.runTurn({ sessionId, text: 'one' })).text).toBe('first answer');
    expect((await h.engine.runTurn({ sessionId, text: 'two' })).text).toBe('[fake] two');
  });

  it('records an unknown tool and invalid arguments as failed calls the model can read', async () => {
    h = await openHarness({
      script: [
        {
          tool_calls: [
            { name: 'no_such_tool', arguments: {} },
            { name: 'read_file', arguments: { file: 'x' } },
          ],
        },
        { content: 'ok' },
      ],
    });
    const { sessionId } = await h.sessions.create({ title: 't', coreId: 'default' });
    await h.engine.runTurn({ sessionId, text: 'go' });
    const calls = await toolCalls(h);
    expect(calls.map((c) => c.status)).toEqual(['failed', 'failed']);
    expect(calls[0]!.error?.message).toMatch(/no tool named no_such_tool in this turn; tools: read_file/);
    expect(calls[1]!.error?.message).toMatch(/invalid read_file arguments at path: missing \(required string\)/);
    expect(calls[1]!.error?.message).not.toMatch(/received undefined/);
    expect(await h.verify()).toEqual([]);
  });

  it('ends the turn with a clear message when the step budget is used up', async () => {
    const loop = { tool_calls: [{ name: 'list_dir', arguments: { path: '.' } }] };
    h = await openHarness({ script: [loop, loop, loop, loop], stepBudget: 3 });
    const { sessionId } = await h.sessions.create({ title: 't', coreId: 'default' });
    const outcome = await h.engine.runTurn({ sessionId, text: 'loop' });
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('budget_exhausted');
    expect(outcome.text).toMatch(/step budget of 3 model rounds/);
    expect(h.provider.requests).toHaveLength(3);
    const run = await h.runs.get(outcome.runId);
    expect(run.state).toBe('failed');
    expect(await h.verify()).toEqual([]);
  });

  it('runs one turn at a time per session and sessions concurrently', async () => {
    h = await openHarness({ script: [] });
    const a = await h.sessions.create({ title: 'a', coreId: 'default' });
    const b = await h.sessions.create({ title: 'b', coreId: 'default' });
    const outcomes = await Promise.all([
      h.engine.runTurn({ sessionId: a.sessionId, text: 'a1' }),
      h.engine.runTurn({ sessionId: a.sessionId, text: 'a2' }),
      h.engine.runTurn({ sessionId: b.sessionId, text: 'b1' }),
    ]);
    expect(outcomes.map((o) => o.text)).toEqual(['[fake] a1', '[fake] a2', '[fake] b1']);
    const history = await h.sessions.history(a.sessionId);
    expect(history.map((m) => m.text)).toEqual(['a1', '[fake] a1', 'a2', '[fake] a2']);
  });

  it('resumes a turn from the log alone in a fresh runtime after the store is reopened', async () => {
    h = await openHarness({
      script: [{ tool_calls: [{ name: 'list_dir', arguments: { path: '.' } }] }, { content: 'listed' }],
    });
    const { sessionId } = await h.sessions.create({ title: 't', coreId: 'default' });
    const outcome = await h.engine.runTurn({ sessionId, text: 'list' });
    const turn = await loadTurn(h.store, outcome.turnId);
    expect(turn.steps.map((s) => s.calls.map((c) => c.state))).toEqual([['succeeded'], []]);
    expect(existsSync(h.path)).toBe(true);
  });
});
