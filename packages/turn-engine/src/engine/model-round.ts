import { IdPrefix } from '@demiurge/contracts';
import { collectCompletion } from '@demiurge/providers';
import { compactIfNeeded } from './compaction.js';
import { checkpoint, type TurnExecution } from './execution.js';
import { transcript } from './model-context.js';
import type { EngineDeps } from './options.js';

/**
 * Whether the turn is offered the tool `name`: a delegated turn's selection limits its tools, and a turn keeps
 * the tools pinned at its admission (`turn.started` core pin): a tool registered later (an MCP server that came
 * up, or changed its tools with `tools/list_changed`) is offered from the next turn admitted; a tool no longer
 * registered (removed by its server) is not offered any more.
 */
export function offeredTo(turn: TurnExecution['turn']): (name: string) => boolean {
  const allowed = turn.selection?.tools;
  const pinned = turn.core?.tools;
  return (name) => (!allowed || allowed.includes(name)) && (!pinned || pinned.includes(name));
}

/**
 * One model round: compact the session first when the request would pass the threshold of the window
 * ({@link compactIfNeeded}, its own commit), ask the provider, then record the whole response in one commit: `turn.model_responded`
 * with its tool calls, each call's `tool_call.requested`, and a run checkpoint (refused while cancelling).
 */
export async function modelRound(deps: EngineDeps, exec: TurnExecution, stepId: string): Promise<void> {
  const { provider, tools, ids } = deps;
  const turn = exec.turn;
  const offered = offeredTo(turn);
  const specs = tools.specs().filter((t) => offered(t.name));
  let messages = await transcript(deps, turn);
  if (await compactIfNeeded(deps, exec, messages, specs)) messages = await transcript(deps, turn);
  const labels = { turnId: turn.streamId, runId: exec.runId, sessionId: exec.sessionId, stepId };
  const completion = await collectCompletion(
    provider.complete({ messages, tools: specs, signal: exec.signal, labels }),
  );
  const calls = completion.toolCalls.map((c) => ({
    callId: c.id,
    toolCallId: ids.next(IdPrefix.toolCall),
    name: c.name,
    arguments: (c.arguments ?? {}) as never,
    ...(c.argumentsError !== undefined ? { argumentsError: c.argumentsError } : {}),
  }));
  await exec.write(() => ({
    run: [checkpoint(exec.runId, `${turn.streamId}/${stepId}`, 'model_round')],
    turn: [
      {
        type: 'turn.model_responded',
        data: {
          turnId: turn.streamId,
          runId: exec.runId,
          stepId,
          provider: provider.name,
          model: provider.model,
          content: completion.content,
          toolCalls: calls,
          usage: completion.usage,
        },
      },
    ],
    calls: calls.map((c) => {
      const tool = tools.get(c.name);
      return {
        toolCallId: c.toolCallId,
        events: [
          {
            type: 'tool_call.requested',
            data: {
              toolCallId: c.toolCallId,
              sessionId: exec.sessionId,
              turnId: turn.streamId,
              stepId,
              tool: c.name,
              idempotent: tool?.idempotent ?? false,
              runId: exec.runId,
              arguments: c.arguments,
              ...(c.argumentsError !== undefined ? { argumentsError: c.argumentsError } : {}),
              ...(tool && c.argumentsError === undefined ? { effect: tool.effect } : {}),
            },
          },
        ],
      };
    }),
  }));
}
