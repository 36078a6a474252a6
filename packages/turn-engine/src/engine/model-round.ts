import { IdPrefix } from '@demiurge/contracts';
import { type ChatMessage, collectCompletion } from '@demiurge/providers';
import { type TurnRecord, toolResultText } from '../turn-state.js';
import { checkpoint, type TurnExecution } from './execution.js';
import type { EngineDeps } from './options.js';

/**
 * One model round: ask the provider, then record the whole response in one commit: `turn.model_responded`
 * with its tool calls, each call's `tool_call.requested`, and a run checkpoint (refused while cancelling).
 */
export async function modelRound(deps: EngineDeps, exec: TurnExecution, stepId: string): Promise<void> {
  const { provider, tools, ids } = deps;
  const turn = exec.turn;
  const messages = await transcript(deps, turn);
  const allowed = turn.selection?.tools;
  const specs = tools.specs().filter((t) => !allowed || allowed.includes(t.name));
  const completion = await collectCompletion(provider.complete({ messages, tools: specs, signal: exec.signal }));
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

/**
 * What the model is sent. All system content — the core's instructions, system messages of the history
 * (fork context, slot context kept in history) and this turn's system context — is merged, in that order,
 * into one leading system message: servers with strict chat templates refuse a system message anywhere
 * but first. The rest keeps its order: history, this turn's user context, the input, the model rounds.
 */
export async function transcript(deps: EngineDeps, turn: TurnRecord): Promise<ChatMessage[]> {
  const system: string[] = [];
  const messages: ChatMessage[] = [];
  if (deps.instructions) system.push(deps.instructions);
  let input: string | undefined;
  for (const entry of await deps.sessions.history(turn.sessionId!, { forModel: true })) {
    if (entry.turnId === turn.streamId) {
      if (entry.messageId === turn.inputMessageId) input = entry.text;
      continue; // this turn's own messages: its context and input come next, in order
    }
    if (entry.role === 'system') system.push(entry.text);
    else if (entry.role === 'user') messages.push({ role: 'user', content: entry.text });
    else if (entry.role === 'assistant') messages.push({ role: 'assistant', content: entry.text });
  }
  for (const c of turn.context) {
    if (c.role === 'system') system.push(c.text);
    else messages.push({ role: c.role, content: c.text });
  }
  if (input !== undefined) messages.push({ role: 'user', content: input });
  if (system.length > 0) messages.unshift({ role: 'system', content: system.join('\n\n') });
  for (const step of turn.steps) {
    messages.push({
      role: 'assistant',
      content: step.content,
      toolCalls: step.calls.map((c) => ({
        id: c.callId,
        name: c.name,
        arguments: c.arguments,
        ...(c.argumentsError !== null ? { argumentsError: c.argumentsError } : {}),
      })),
    });
    for (const call of step.calls) {
      messages.push({ role: 'tool', toolCallId: call.callId, name: call.name, content: toolResultText(call) });
    }
  }
  return messages;
}
