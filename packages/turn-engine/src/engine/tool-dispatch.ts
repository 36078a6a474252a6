import { DemiurgeError, ErrorCode, type NewEvent } from '@demiurge/contracts';
import type { AppendStream } from '@demiurge/event-store';
import type { ToolCallEventType } from '@demiurge/lifecycle';
import type { z } from 'zod';
import { planModeDecision } from '../policy.js';
import type { EffectClass, ToolDefinition } from '../tool.js';
import { ToolOutcomeUnknownError } from '../tools/errors.js';
import { decideToolCall } from '../turn.decider.js';
import { callFacts, type ToolCallRecord } from '../turn-state.js';
import { askApproval } from './approval-wait.js';
import { checkpoint, type TurnExecution } from './execution.js';
import { offeredTo } from './model-round.js';
import type { EngineDeps } from './options.js';

/**
 * Why a tool call's arguments were refused, for the model: every problem with the field it is at; a missing
 * field reads "missing" (not zod's "received undefined"), an unknown key lists the accepted ones.
 */
export function invalidArguments(
  name: string,
  tool: ToolDefinition,
  issues: readonly z.core.$ZodIssue[],
  args?: unknown,
): string {
  const problems = issues.slice(0, 5).map((issue) => describeIssue(tool, issue, args));
  const more = issues.length > 5 ? `; and ${issues.length - 5} more` : '';
  return `invalid ${name} arguments at ${problems.join('; at ')}${more}`;
}

function describeIssue(tool: ToolDefinition, issue: z.core.$ZodIssue, args: unknown): string {
  const where = issue.path.join('.') || '(root)';
  if (issue.code === 'unrecognized_keys') {
    const shape = (tool.input as { shape?: Record<string, unknown> }).shape;
    const accepted = shape ? `; accepted keys: ${Object.keys(shape).join(', ')}` : '';
    return `${where}: unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}${accepted}`;
  }
  if (issue.code === 'invalid_type' && issue.path.length > 0 && valueAt(args, issue.path) === undefined) {
    return `${where}: missing (required ${issue.expected})`;
  }
  return `${where}: ${issue.message}`;
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let at = value;
  for (const key of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
}

/** A started call whose owner is gone, no outcome recorded: it may have taken effect. Never re-run it. */
export function recordUnknown(exec: TurnExecution, call: ToolCallRecord): Promise<void> {
  const reason = 'the host stopped while the call ran';
  return exec.write(() => ({
    calls: [
      {
        toolCallId: call.streamId,
        events: decideToolCall({ type: 'mark_unknown', toolCallId: call.streamId, reason }, callFacts(call)),
      },
    ],
  }));
}

/**
 * Takes one requested tool call to an outcome: the tool and its arguments are checked (a missing tool or bad
 * arguments fail the call for the model to read, never run it), plan mode's policy applies (an approval of
 * this exact call is consumed, asked for, or the call is denied), then the call is recorded started, run, and
 * its outcome recorded, even while the run is cancelling. A paused run does not start a call (the loop waits).
 */
export async function dispatchCall(deps: EngineDeps, exec: TurnExecution, call: ToolCallRecord): Promise<void> {
  const { tools, approvals } = deps;
  const toolCallId = call.streamId;
  const offered = offeredTo(exec.turn);
  const tool = offered(call.name) ? tools.get(call.name) : undefined;
  const fail = (code: string, message: string) =>
    exec.write(() => ({
      calls: [
        {
          toolCallId,
          events: [
            { type: 'tool_call.started', data: { toolCallId } },
            { type: 'tool_call.failed', data: { toolCallId, error: { code, message } } },
          ],
        },
      ],
    }));
  if (!tool) {
    const names = tools.names().filter(offered);
    return fail(ErrorCode.ToolFailed, `no tool named ${call.name} in this turn; tools: ${names.join(', ')}`);
  }
  if (call.argumentsError !== null) {
    // The model wrote bad JSON: answer with the parse error (the model corrects itself), never run the tool.
    return fail(
      ErrorCode.ToolFailed,
      `invalid ${call.name} arguments: ${call.argumentsError}; call ${call.name} again with a JSON object`,
    );
  }
  const parsed = tool.input.safeParse(call.arguments);
  if (!parsed.success)
    return fail(ErrorCode.ToolFailed, invalidArguments(call.name, tool, parsed.error.issues, call.arguments));
  const effect: EffectClass = tool.effectOf?.(parsed.data) ?? tool.effect;
  const session = await deps.sessions.get(exec.sessionId);
  const decision = planModeDecision(session.mode, call.name, effect);
  const also: AppendStream[] = [];
  if (!decision.allowed) {
    const approval = await approvals.findUsable(exec.sessionId, call.name, call.arguments);
    if (approval) {
      also.push(await approvals.consumeStream(approval.approvalId, toolCallId));
    } else if (deps.onPlanModeWrite === 'ask') {
      const answered = await askApproval(deps, exec, call, decision.reason);
      if (!answered) return;
      // Paused while it waited: the call does not start now; at resume the granted approval is found again.
      if ((await exec.refreshRun()).state === 'paused') return;
      also.push(await approvals.consumeStream(answered, toolCallId));
    } else {
      await exec.write(() => ({
        calls: [
          {
            toolCallId,
            events: [
              { type: 'tool_call.denied', data: { toolCallId, policy: decision.policy, reason: decision.reason } },
            ],
          },
        ],
      }));
      return;
    }
  }
  await exec.write(() => ({
    run: [checkpoint(exec.runId, `${toolCallId}/tool_started`, 'tool_started')],
    calls: [{ toolCallId, events: [{ type: 'tool_call.started', data: { toolCallId } }] }],
    also,
  }));
  const signal = exec.signal;
  let events: NewEvent<ToolCallEventType>[];
  try {
    const result = await tool.run(parsed.data, {
      workspaceRoot: exec.turn.workspace ?? deps.workspaceRoot,
      signal,
      sessionId: exec.sessionId,
      turnId: exec.turnId,
      runId: exec.runId,
      toolCallId,
      // A spawned process group is recorded before its command runs: the next host start finds an orphan.
      onProcessStarted: async (p) => {
        const data = {
          toolCallId,
          spawnId: p.spawnId,
          host: deps.runs.owner,
          pid: p.pid,
          pgid: p.pgid,
          platform: p.platform,
          ...(p.startMarker ? { startMarker: p.startMarker } : {}),
        };
        await exec.write(() => ({ calls: [{ toolCallId, events: [{ type: 'tool_call.process_started', data }] }] }), {
          evenWhenCancelling: true,
        });
      },
    });
    events = [{ type: 'tool_call.succeeded', data: { toolCallId, output: result.output } }];
  } catch (err) {
    events = signal.aborted
      ? [{ type: 'tool_call.cancelled', data: { toolCallId, reason: 'the run was cancelled while the call ran' } }]
      : err instanceof ToolOutcomeUnknownError
        ? [{ type: 'tool_call.unknown', data: { toolCallId, reason: err.reason } }]
        : [
            {
              type: 'tool_call.failed',
              data: {
                toolCallId,
                error: {
                  code: err instanceof DemiurgeError ? err.code : ErrorCode.ToolFailed,
                  message: (err as Error).message || String(err),
                },
              },
            },
          ];
  }
  // The outcome is recorded even when the run is cancelling: settling in-flight calls is the cancel contract.
  await exec.write(
    () => ({
      run: [checkpoint(exec.runId, `${toolCallId}/tool_result`, 'tool_result')],
      calls: [{ toolCallId, events }],
    }),
    { evenWhenCancelling: true },
  );
}
