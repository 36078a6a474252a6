import type { RuntimeControlPlane } from '@demiurge/control-plane';
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../tool.js';

export const EvolveCoreInput = z.strictObject({
  goal: z.string().min(1).describe('the change to make to the Agent Core, e.g. "add an output slot that ..."'),
});

/**
 * `evolve_core(goal)`: submits an `evolver.run` task of the session, a child agent that changes the Agent Core
 * in an isolated working copy; the change becomes the core's new revision only if the core's check passes.
 * Its effect class is `write.file`: plan mode denies it with the usual explanation unless the call is approved.
 * Returns `{ task_id }` at once (wait with yield_until, read with task_status).
 */
export function createEvolveTool(controlPlane: RuntimeControlPlane): ToolDefinition<z.output<typeof EvolveCoreInput>> {
  return defineTool({
    name: 'evolve_core',
    description:
      'Changes the Agent Core itself (its slots, pipelines, instructions): a child agent edits an isolated copy, ' +
      'and the result is saved as a new core revision only if the core check passes. Detached: returns { task_id }.',
    input: EvolveCoreInput,
    effect: 'write.file',
    idempotent: false,
    async run(input, ctx) {
      const task = await controlPlane.submitTask(
        {
          sessionId: ctx.sessionId,
          runId: ctx.runId,
          kind: 'evolver.run',
          title: `evolve: ${input.goal.length > 72 ? `${input.goal.slice(0, 71)}…` : input.goal}`,
          input: { goal: input.goal },
        },
        { kind: 'agent', id: ctx.sessionId },
      );
      return { output: JSON.stringify({ task_id: task.taskId }), data: { task_id: task.taskId } };
    },
  });
}
