import { RunsCollections, runsProjector, type ToolCallView } from '@demiurge/projector-runs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, ToolOutcomeUnknownError, workspaceTools } from '../src/index.js';
import { type Harness, openHarness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

let runs = 0;
/** A tool from outside (an MCP server's): its own JSON Schema, and it loses sight of its effect mid-call. */
const outside = defineTool({
  name: 'srv__send',
  description: 'sends something somewhere',
  input: z.looseObject({}),
  parameters: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] },
  effect: 'mcp.write',
  idempotent: false,
  run: async () => {
    runs++;
    throw new ToolOutcomeUnknownError('srv__send', 'the MCP server srv exited while the call ran');
  },
});

describe('tools from outside the engine', () => {
  it('are shown with their own JSON Schema; a call whose outcome was lost is unknown, run once, and the model is told', async () => {
    runs = 0;
    h = await openHarness({
      tools: [...workspaceTools, outside],
      script: [{ tool_calls: [{ name: 'srv__send', arguments: { to: 'x' } }] }, { content: 'I will check first.' }],
    });
    const session = await h.sessions.create({ title: 't', coreId: 'default' });
    const outcome = await h.engine.runTurn({ sessionId: session.sessionId, text: 'send it' });
    expect(outcome).toMatchObject({ status: 'completed', text: 'I will check first.' });
    expect(runs).toBe(1);
    const spec = h.provider.requests[0]!.tools!.find((t) => t.name === 'srv__send');
    expect(spec?.parameters).toEqual({ type: 'object', properties: { to: { type: 'string' } }, required: ['to'] });
    const calls = await h.store.projection(runsProjector.name).list<ToolCallView>(RunsCollections.toolCalls);
    expect(calls.map((c) => [c.tool, c.status])).toEqual([['srv__send', 'unknown']]);
    const result = h.provider.requests[1]!.messages.find((m) => m.role === 'tool');
    expect(result?.content).toMatch(
      /^outcome unknown: the MCP server srv exited while the call ran\. .*not idempotent/,
    );
    expect(await h.verify()).toEqual([]);
  });
});
