import { type IdGenerator, IdPrefix } from '@demiurge/contracts';
import { taskKindInputs } from '@demiurge/control-plane';
import type { SessionRuntime } from '@demiurge/sessions';
import type { TurnEngine, TurnOutcome } from '@demiurge/turn-engine';
import type { RunningTask, TaskHandler, TaskOutcome } from '@demiurge/workers';

/** How many recent parent messages a `fork` child sees. */
export const FORK_MESSAGES = 12;

/**
 * The `agent.spawn` task handler: a child agent turn in a child session (its parent and depth recorded on
 * `session.created`), `isolated` or `fork` context (recent parent messages), the tools and slot
 * selections applied by the engine (tool list and dispatch) and the slot hooks; bootstrap off unless
 * asked. The task's start, the child session and the child's run and turn are one commit (the turn's
 * admission). The child's answer is the task's summary: evidence for the parent.
 */
export function createAgentSpawnHandler(deps: {
  readonly sessions: SessionRuntime;
  readonly ids: IdGenerator;
  readonly engine: () => TurnEngine;
  readonly coreId: string;
}): TaskHandler {
  return {
    prepare(task) {
      taskKindInputs['agent.spawn'].parse(task.input);
      return {};
    },
    startsTask: true,
    async start(ctx) {
      const input = taskKindInputs['agent.spawn'].parse(ctx.task.input) as {
        goal: string;
        coreId?: string;
        contextMode: 'isolated' | 'fork';
        tools: 'all' | string[];
        inputSlots: 'all' | string[];
        outputSlots: 'all' | string[];
        useBootstrap: boolean;
      };
      const parent = await deps.sessions.get(ctx.task.sessionId);
      const recent =
        input.contextMode === 'fork'
          ? await deps.sessions.history(parent.sessionId, { forModel: true, limit: FORK_MESSAGES })
          : [];
      const preamble =
        recent.length > 0
          ? [
              {
                role: 'system' as const,
                text: `Context from the parent conversation:\n${recent.map((m) => `${m.role}: ${m.text}`).join('\n')}`,
              },
            ]
          : [];
      // The child's session and run ids are ours before admission, so a stop can name the run once it is admitted.
      const runId = deps.ids.next(IdPrefix.run);
      // One commit: the task's `task.started`, the child session (its parent and depth on `session.created`),
      // the fork context, the goal as its input, the run and the turn.
      const { admitted, outcome } = deps.engine().startTurn({
        runId,
        sessionId: deps.ids.next(IdPrefix.session),
        text: input.goal,
        session: {
          open: {
            title: `child: ${input.goal.slice(0, 60)}`,
            coreId: input.coreId ?? deps.coreId,
            parent: { sessionId: parent.sessionId, taskId: ctx.task.taskId, depth: (parent.parent?.depth ?? 0) + 1 },
          },
          preamble,
        },
        also: async () => [await ctx.startStream()],
        // A model acting in the parent session started it: that model (and its session) owns the child run.
        actor: { kind: 'agent', id: parent.sessionId },
        selection: {
          ...(input.tools === 'all' ? {} : { tools: input.tools }),
          inputSlots: input.inputSlots,
          outputSlots: input.outputSlots,
          bootstrap: input.useBootstrap,
        },
      });
      const finished = outcome.then(toTaskOutcome, (err: Error) => ({
        status: 'failed' as const,
        error: { code: 'child_failed', message: err.message },
      }));
      // The task started with the admission; an admission refused (the task was started or cancelled meanwhile)
      // rejects here, and the worker reads the task to tell which.
      await admitted;
      const running: RunningTask = {
        finished,
        async stop(reason) {
          await deps.engine().cancel(runId, reason);
          return finished;
        },
      };
      return running;
    },
  };
}

function toTaskOutcome(outcome: TurnOutcome): TaskOutcome {
  switch (outcome.status) {
    case 'completed':
      return { status: 'completed', summary: outcome.text };
    case 'cancelled':
      return { status: 'cancelled', reason: outcome.text };
    default:
      return {
        status: 'failed',
        error: outcome.error ?? { code: `child_${outcome.status}`, message: `the child turn ended ${outcome.status}` },
      };
  }
}
