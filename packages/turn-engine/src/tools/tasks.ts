import { DemiurgeError, ErrorCode } from '@demiurge/contracts';
import {
  completionWorkId,
  type DurableWorkRuntime,
  type HostWorkLifecycleRuntime,
  NotFoundError,
  type RuntimeControlPlane,
} from '@demiurge/control-plane';
import type { EventStore } from '@demiurge/event-store';
import type { TaskView } from '@demiurge/projector-task-board';
import type { SessionRuntime } from '@demiurge/sessions';
import { z } from 'zod';
import { defineTool, type ToolContext, type ToolDefinition } from '../tool.js';
import type { ShellInput } from './shell.js';
import { resolveInWorkspace } from './workspace-path.js';

/** Delegation limits (seed 003): depth 2, 4 children per turn, 2 running children per session. */
export interface DelegationLimits {
  readonly maxDepth: number;
  readonly childrenPerTurn: number;
  readonly runningChildrenPerSession: number;
}

export const DEFAULT_DELEGATION_LIMITS: DelegationLimits = {
  maxDepth: 2,
  childrenPerTurn: 4,
  runningChildrenPerSession: 2,
};

export interface TaskToolsOptions {
  readonly store: EventStore;
  readonly controlPlane: RuntimeControlPlane;
  readonly work: DurableWorkRuntime;
  readonly host: HostWorkLifecycleRuntime;
  readonly sessions: SessionRuntime;
  /** Cancels through the task worker (single-flight process cleanup) when the host runs one. */
  readonly cancelTask?: (ref: { sessionId: string; taskId: string }, reason: string) => Promise<unknown>;
  readonly limits?: Partial<DelegationLimits>;
  /**
   * The slot ids a child may select (from the core's pipelines), or a function of the delegating call that
   * reads them from the core revision its turn is pinned to; absent: any id is refused but the defaults.
   */
  readonly knownSlots?: KnownSlots | ((ctx: ToolContext) => Promise<KnownSlots>);
  /** The tool names a child may select. */
  readonly knownTools: () => readonly string[];
  /** The Agent Core this host runs: the only `core_id` a delegation may name (absent: any id is passed on). */
  readonly coreId?: string;
}

/** The input and output slot ids of a core's pipelines, which `delegate_task` may select. */
export interface KnownSlots {
  readonly input: readonly string[];
  readonly output: readonly string[];
}

/** A delegation or task tool refused its input; the model reads the message. */
export class TaskToolError extends DemiurgeError {
  override readonly name = 'TaskToolError';
  readonly code = ErrorCode.ToolFailed;
}

const ACTIVE = ['created', 'active', 'waiting', 'blocked'];
const FINAL = ['completed', 'failed', 'cancelled'];

/** What the model sees of a task. */
export function modelView(task: TaskView): Record<string, unknown> {
  return {
    task_id: task.taskId,
    kind: task.kind,
    title: task.title,
    status: task.status,
    ...(task.exitCode !== null ? { exit_code: task.exitCode } : {}),
    ...(task.summary ? { summary: task.summary } : {}),
    ...(task.error ? { error: task.error } : {}),
    ...(task.cancelReason ? { cancel_reason: task.cancelReason } : {}),
    log_tail: task.logTail.slice(-20).map((l) => l.text),
  };
}

/**
 * The operator's view of a task (`task_status` with `view: "operator"`): every field of {@link modelView}
 * plus what an operator needs to act on it — session, run, notify policy, blocked reason, worker, process
 * identity, artifacts, completion notice, times and the actions the task's machine allows now.
 */
export function operatorView(task: TaskView): Record<string, unknown> {
  return {
    ...modelView(task),
    session_id: task.sessionId,
    run_id: task.runId,
    parent_task_id: task.parentTaskId,
    notify_policy: task.notifyPolicy,
    lane: task.lane,
    hidden: task.hidden,
    blocked: task.blocked,
    worker: task.worker,
    process: task.process,
    artifacts: task.artifacts,
    completion: task.completion,
    submitted_at: task.submittedAt,
    updated_at: task.updatedAt,
    allowed: task.allowed,
  };
}

/** The principal of what a tool does: the model acting in the calling session. */
const modelIn = (ctx: ToolContext) => ({ kind: 'agent' as const, id: ctx.sessionId });

const json = (value: unknown) => ({ output: JSON.stringify(value), data: value });

export const DelegateTaskInput = z.strictObject({
  goal: z.string().min(1).describe('What the child agent should achieve; its answer comes back as evidence.'),
  core_id: z
    .string()
    .min(1)
    .optional()
    .describe("The Agent Core the child runs; a host runs one core, so only that core's id is accepted."),
  context_mode: z.enum(['isolated', 'fork']).default('isolated'),
  notify_policy: z.enum(['return_to_parent', 'silent']).default('return_to_parent'),
  max_depth: z.number().int().positive().optional(),
  tools: z.union([z.literal('all'), z.array(z.string().min(1))]).default('all'),
  input_slots: z.union([z.literal('all'), z.array(z.string().min(1))]).default(['base_input']),
  output_slots: z.union([z.literal('all'), z.array(z.string().min(1))]).default(['base_output']),
  use_bootstrap: z.boolean().default(false),
});

/**
 * The model-facing task tools of seed 003: `delegate_task`, `task_list`, `task_status`, `task_control`
 * and `yield_until`. They only see detached tasks of the calling session: another session's task, or an
 * unknown id, reads "not found" either way; foreground turns are never tasks.
 */
export function createTaskTools(options: TaskToolsOptions): ToolDefinition[] {
  const limits = { ...DEFAULT_DELEGATION_LIMITS, ...options.limits };
  const { controlPlane, sessions } = options;
  const get = async (ctx: ToolContext, taskId: string) => {
    try {
      return await controlPlane.getTask({ sessionId: ctx.sessionId, taskId });
    } catch (err) {
      if (err instanceof NotFoundError) throw new TaskToolError(`task ${taskId} not found`);
      throw err;
    }
  };

  const delegateTask = defineTool({
    name: 'delegate_task',
    description:
      'Starts a child agent on a goal in its own session, detached; returns { task_id } at once. Wait for it with ' +
      'yield_until, read it with task_status. context_mode "fork" gives the child recent messages of this session.',
    input: DelegateTaskInput,
    effect: 'task',
    idempotent: false,
    async run(input, ctx) {
      if (input.core_id !== undefined && options.coreId !== undefined && input.core_id !== options.coreId) {
        throw new TaskToolError(
          `unknown core_id "${input.core_id}": this host runs one Agent Core, "${options.coreId}"; omit core_id or pass "${options.coreId}"`,
        );
      }
      const session = await sessions.get(ctx.sessionId);
      const depth = (session.parent?.depth ?? 0) + 1;
      const maxDepth = Math.min(input.max_depth ?? limits.maxDepth, limits.maxDepth);
      if (depth > maxDepth) {
        throw new TaskToolError(
          `delegation depth ${depth} is over the limit of ${maxDepth}: this session is already a child at depth ${depth - 1}`,
        );
      }
      if (input.tools !== 'all') {
        const known = options.knownTools();
        const unknown = input.tools.filter((t) => !known.includes(t));
        if (unknown.length > 0)
          throw new TaskToolError(`unknown tools ${unknown.join(', ')}; tools: ${known.join(', ')}`);
      }
      const slots = typeof options.knownSlots === 'function' ? await options.knownSlots(ctx) : options.knownSlots;
      for (const phase of ['input', 'output'] as const) {
        const selected = input[`${phase}_slots`];
        const known = slots?.[phase] ?? [`base_${phase}`];
        if (selected === 'all') continue;
        const unknown = selected.filter((s) => !known.includes(s));
        if (unknown.length > 0) {
          throw new TaskToolError(`unknown ${phase} slots ${unknown.join(', ')}; ${phase} slots: ${known.join(', ')}`);
        }
      }
      const mine = await controlPlane.listTasks(ctx.sessionId, { kind: 'agent.spawn' });
      const thisTurn = mine.filter((t) => t.runId === ctx.runId).length;
      if (thisTurn >= limits.childrenPerTurn) {
        throw new TaskToolError(`this turn already delegated ${thisTurn} children (limit ${limits.childrenPerTurn})`);
      }
      const running = mine.filter((t) => ACTIVE.includes(t.status)).length;
      if (running >= limits.runningChildrenPerSession) {
        throw new TaskToolError(
          `${running} children are still running in this session (limit ${limits.runningChildrenPerSession}); wait for one with yield_until`,
        );
      }
      const task = await controlPlane.submitTask(
        {
          sessionId: ctx.sessionId,
          runId: ctx.runId,
          kind: 'agent.spawn',
          title: input.goal.length > 80 ? `${input.goal.slice(0, 79)}…` : input.goal,
          notifyPolicy: input.notify_policy,
          input: {
            goal: input.goal,
            ...(input.core_id ? { coreId: input.core_id } : {}),
            contextMode: input.context_mode,
            tools: input.tools,
            inputSlots: input.input_slots,
            outputSlots: input.output_slots,
            useBootstrap: input.use_bootstrap,
            maxDepth,
          },
        },
        modelIn(ctx),
      );
      return json({ task_id: task.taskId });
    },
  });

  const taskList = defineTool({
    name: 'task_list',
    description: "Lists this session's detached tasks (delegations, background commands), optionally of one kind.",
    input: z.strictObject({
      kind: z.enum(['agent.spawn', 'terminal.exec', 'evolver.run', 'schedule.fire']).optional(),
    }),
    effect: 'read',
    idempotent: true,
    async run(input, ctx) {
      const tasks = await controlPlane.listTasks(ctx.sessionId, input.kind ? { kind: input.kind } : {});
      return json(tasks.map((t) => ({ task_id: t.taskId, kind: t.kind, title: t.title, status: t.status })));
    },
  });

  const taskStatus = defineTool({
    name: 'task_status',
    description: 'The status of one detached task of this session: status, exit code, summary, error, log tail.',
    input: z.strictObject({ task_id: z.string().min(1), view: z.enum(['model', 'operator']).default('model') }),
    effect: 'read',
    idempotent: true,
    async run(input, ctx) {
      const task = await get(ctx, input.task_id);
      return json(input.view === 'operator' ? operatorView(task) : modelView(task));
    },
  });

  const taskControl = defineTool({
    name: 'task_control',
    description: 'Controls a detached task of this session. The only command is "cancel".',
    input: z.strictObject({ task_id: z.string().min(1), command: z.string().default('cancel') }),
    effect: 'task',
    idempotent: true,
    async run(input, ctx) {
      if (input.command !== 'cancel')
        throw new TaskToolError(`task_control command "${input.command}" is not supported; only "cancel"`);
      const task = await get(ctx, input.task_id);
      if (!FINAL.includes(task.status)) {
        const ref = { sessionId: ctx.sessionId, taskId: task.taskId };
        if (options.cancelTask) await options.cancelTask(ref, 'cancelled by the agent (task_control)');
        else await controlPlane.cancelTask(ref, 'cancelled by the agent (task_control)');
      }
      return json(modelView(await get(ctx, input.task_id)));
    },
  });

  const yieldUntil = defineTool({
    name: 'yield_until',
    description:
      'Waits until a detached task of this session ends (up to timeout_seconds) and returns its final status, ' +
      'consuming its completion notice; on timeout returns the current status with timed_out: true.',
    input: z.strictObject({ task_id: z.string().min(1), timeout_seconds: z.number().positive().max(3600).default(30) }),
    effect: 'read',
    idempotent: true,
    async run(input, ctx) {
      const deadline = Date.now() + input.timeout_seconds * 1000;
      for (;;) {
        const task = await get(ctx, input.task_id);
        if (FINAL.includes(task.status)) {
          if (task.completion === 'ready') await consumeCompletion(options, ctx.sessionId, task.taskId);
          return json({ ...modelView(await get(ctx, input.task_id)), timed_out: false });
        }
        const left = deadline - Date.now();
        if (left <= 0) return json({ ...modelView(task), timed_out: true });
        await nextChange(options.store, task.taskId, Math.min(left, 1000), ctx.signal);
      }
    },
  });

  return [delegateTask, taskList, taskStatus, taskControl, yieldUntil];
}

/** Claims and acknowledges the task's completion notice so no extra completion turn runs for it. */
async function consumeCompletion(options: TaskToolsOptions, sessionId: string, taskId: string): Promise<void> {
  try {
    const claim = await options.work.claim(completionWorkId(taskId));
    await options.host.acknowledgeTaskCompletion(claim, { sessionId, via: 'yield_until' });
  } catch (err) {
    // Someone else consumed (or holds) it: the task's final status is what the model needs.
    if (!(err instanceof DemiurgeError)) throw err;
  }
}

function nextChange(store: EventStore, taskId: string, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const finish = () => {
      sub.unsubscribe();
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      finish();
      reject(new TaskToolError('yield_until was cancelled with its run'));
    };
    const sub = store.events$.subscribe((event) => {
      if (event.streamId === taskId) {
        finish();
        resolve();
      }
    });
    const timer = setTimeout(() => {
      finish();
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort);
  });
}

/**
 * The `shell` tool with `background: true` handled: such a call submits a `terminal.exec` task of the
 * session (`/bin/sh -c command` in the resolved cwd) and returns `{ task_id }` at once.
 */
export function withBackgroundShell(
  shell: ToolDefinition<ShellInput>,
  controlPlane: RuntimeControlPlane,
): ToolDefinition<ShellInput> {
  return {
    ...shell,
    async run(input, ctx) {
      if (!input.background) return shell.run(input, ctx);
      const task = await controlPlane.submitTask(
        {
          sessionId: ctx.sessionId,
          runId: ctx.runId,
          kind: 'terminal.exec',
          title: input.command.length > 80 ? `${input.command.slice(0, 79)}…` : input.command,
          input: {
            command: '/bin/sh',
            args: ['-c', input.command],
            cwd: await resolveInWorkspace(ctx.workspaceRoot, input.cwd ?? '.', { mustExist: true }),
            ...(input.timeout_seconds ? { timeoutSeconds: input.timeout_seconds } : {}),
          },
        },
        modelIn(ctx),
      );
      return json({ task_id: task.taskId });
    },
  };
}
