import { z } from 'zod';
import { RunId, SessionId, TaskId, WorkId } from '../ids.js';
import { defineEvent } from '../registry.js';

/** The detached host-work kinds that become tasks (seed 003's task ledger). */
export const TaskKind = z.enum(['agent.spawn', 'terminal.exec', 'evolver.run', 'schedule.fire']);
export type TaskKind = z.infer<typeof TaskKind>;

const failure = z.object({ code: z.string().min(1), message: z.string().min(1) });

export const TaskSubmitted = defineEvent({
  type: 'task.submitted',
  schemaVersion: 1,
  description: 'A detached task was submitted to the control plane; it is created, not yet started.',
  data: () =>
    z.object({
      taskId: TaskId,
      sessionId: SessionId,
      runId: RunId.optional(),
      kind: TaskKind,
      title: z.string().min(1),
      /** The kind's input, validated by the control plane's kind registry at submit. */
      input: z.json().optional(),
      parentTaskId: TaskId.optional(),
      /** `return_to_parent` (default) announces completion with a `task.completion` work item; `silent` does not. */
      notifyPolicy: z.enum(['return_to_parent', 'silent']).optional(),
    }),
});

export const TaskStarted = defineEvent({
  type: 'task.started',
  schemaVersion: 1,
  description: 'A worker started the task; it is active.',
  data: () => z.object({ taskId: TaskId, worker: z.string().min(1) }),
});

export const TaskWaiting = defineEvent({
  type: 'task.waiting',
  schemaVersion: 1,
  description: 'An active task is waiting (on input, a child task or a timer) and will resume by itself.',
  data: () => z.object({ taskId: TaskId, reason: z.string().min(1) }),
});

export const TaskBlocked = defineEvent({
  type: 'task.blocked',
  schemaVersion: 1,
  description: 'An active task is blocked; `resumable` says whether it can continue once unblocked.',
  data: () => z.object({ taskId: TaskId, reason: z.string().min(1), resumable: z.boolean() }),
});

export const TaskResumed = defineEvent({
  type: 'task.resumed',
  schemaVersion: 1,
  description: 'A waiting or blocked task is active again.',
  data: () => z.object({ taskId: TaskId }),
});

export const TaskCompleted = defineEvent({
  type: 'task.completed',
  schemaVersion: 1,
  description: 'The task finished successfully.',
  data: () =>
    z.object({
      taskId: TaskId,
      summary: z.string().optional(),
      exitCode: z.number().int().optional(),
    }),
});

export const TaskFailed = defineEvent({
  type: 'task.failed',
  schemaVersion: 1,
  description: 'The task ended with an error.',
  data: () => z.object({ taskId: TaskId, error: failure, exitCode: z.number().int().optional() }),
});

export const TaskCancelled = defineEvent({
  type: 'task.cancelled',
  schemaVersion: 1,
  description:
    "The task was cancelled, before or after it started; the reason is kept. When its cleanup (stopping its process tree, its handler's stop) failed, the task is cancelled all the same and `cleanupError` names the error's type and message.",
  data: () =>
    z.object({
      taskId: TaskId,
      reason: z.string().min(1),
      cleanupError: z.object({ type: z.string().min(1), message: z.string().min(1) }).optional(),
    }),
});

export const TaskDeleted = defineEvent({
  type: 'task.deleted',
  schemaVersion: 1,
  description: 'A cancelled task was deleted: hidden from the active board, kept for audit.',
  data: () => z.object({ taskId: TaskId, reason: z.string().min(1).optional() }),
});

export const TaskArchived = defineEvent({
  type: 'task.archived',
  schemaVersion: 1,
  description: 'A finished, cancelled or deleted task was archived.',
  data: () => z.object({ taskId: TaskId }),
});

export const TaskLog = defineEvent({
  type: 'task.log',
  schemaVersion: 1,
  description: 'A bounded line of task output or progress (full output streams are artifacts).',
  data: () => z.object({ taskId: TaskId, stream: z.enum(['stdout', 'stderr', 'progress']), text: z.string() }),
});

export const TaskProcessStarted = defineEvent({
  type: 'task.process_started',
  schemaVersion: 1,
  description:
    "A task's OS process started: host-issued spawn id, pid, process group and the platform's process-start marker " +
    '(on Linux the boot id and the start time); a signal is only ever sent after the marker is re-checked.',
  data: () =>
    z.object({
      taskId: TaskId,
      spawnId: z.string().min(1),
      host: z.string().min(1),
      pid: z.number().int().positive(),
      pgid: z.number().int().positive(),
      platform: z.string().min(1),
      /** e.g. `linux:<boot id>:<start time in clock ticks>`; absent where the platform offers none. */
      startMarker: z.string().min(1).optional(),
    }),
});

export const TaskArtifactRecorded = defineEvent({
  type: 'task.artifact_recorded',
  schemaVersion: 1,
  description: "A file holding a task's full output stream (or another product), recorded with its size and digest.",
  data: () =>
    z.object({
      taskId: TaskId,
      artifactId: z.string().min(1),
      name: z.string().min(1),
      path: z.string().min(1),
      bytes: z.number().int().nonnegative(),
      sha256: z
        .string()
        .regex(/^[0-9a-f]{64}$/)
        .optional(),
    }),
});

export const TaskCompletionReady = defineEvent({
  type: 'task.completion_ready',
  schemaVersion: 1,
  description:
    "A task's notice for its parent session is ready: it finished (`completed`, `failed`, `cancelled`), or it is " +
    "`blocked` and needs the user. `workId` names the notice's `task.completion` work item (absent in old logs: " +
    "the task's one derived work id).",
  data: () =>
    z.object({
      taskId: TaskId,
      outcome: z.enum(['completed', 'failed', 'cancelled', 'blocked']),
      workId: WorkId.optional(),
    }),
});

export const TaskCompletionAcknowledged = defineEvent({
  type: 'task.completion_acknowledged',
  schemaVersion: 1,
  description:
    'The parent session acknowledged a notice of the task (`workId`, absent in old logs): a completion turn or the ' +
    "next input it was merged into, or `yield_until`. Only the task's own session may acknowledge it.",
  data: () => z.object({ taskId: TaskId, consumer: z.string().min(1), workId: WorkId.optional() }),
});

export const taskEvents = [
  TaskSubmitted,
  TaskStarted,
  TaskWaiting,
  TaskBlocked,
  TaskResumed,
  TaskCompleted,
  TaskFailed,
  TaskCancelled,
  TaskDeleted,
  TaskArchived,
  TaskLog,
  TaskProcessStarted,
  TaskArtifactRecorded,
  TaskCompletionReady,
  TaskCompletionAcknowledged,
] as const;
