import type { IdGenerator } from '@demiurge/contracts';
import { type TaskEventType, type TaskState, taskLifecycle } from '../machines/task.machine.js';
import type { WalkSpec } from './machine-walk.js';

/**
 * Valid data for every task event, for {@link MachineWalk}: shaped like the zod schemas of
 * contracts' task.events.ts, optional fields present or not by variant. Tasks are spread over a
 * few sessions; the walk prefers task.log (mode `prefer`) so log tails overflow.
 */

export const TASK_KINDS = ['agent.spawn', 'terminal.exec', 'evolver.run', 'schedule.fire'] as const;

/** What the walk knows of one task. */
export interface TaskModel {
  readonly taskId: string;
  readonly sessionId: string;
  /** Used by task.submitted variants that carry a run or a parent. */
  readonly runId: string;
  readonly parentTaskId: string;
  state: TaskState;
  kind: string;
  deleted: boolean;
  completion: 'none' | 'ready' | 'acknowledged';
  logs: { stream: string; text: string }[];
}

const STREAMS = ['stdout', 'stderr', 'progress'] as const;
const OUTCOMES: Partial<Record<TaskState, string>> = {
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
  blocked: 'blocked',
};

function taskData(m: TaskModel, type: TaskEventType, v: number): Record<string, unknown> {
  const { taskId } = m;
  const odd = v % 2 === 1;
  switch (type) {
    case 'task.submitted':
      return {
        taskId,
        sessionId: m.sessionId,
        kind: TASK_KINDS[v % TASK_KINDS.length],
        title: `task ${v % 100}`,
        ...(odd ? { runId: m.runId, input: { command: 'ls', args: ['-l'] } } : {}),
        ...(v % 3 === 1 ? { parentTaskId: m.parentTaskId } : {}),
        ...(v % 3 === 2 ? { notifyPolicy: odd ? 'silent' : 'return_to_parent' } : {}),
      };
    case 'task.started':
      return { taskId, worker: `worker-${v % 3}` };
    case 'task.waiting':
      return { taskId, reason: 'waiting on a child' };
    case 'task.blocked':
      return { taskId, reason: 'needs approval', resumable: odd };
    case 'task.resumed':
    case 'task.archived':
      return { taskId };
    case 'task.completed':
      return { taskId, ...(odd ? { summary: 'done' } : {}), ...(v % 3 === 0 ? { exitCode: 0 } : {}) };
    case 'task.failed':
      return { taskId, error: { code: `e${v % 3}`, message: 'it broke' }, ...(odd ? { exitCode: 1 + (v % 5) } : {}) };
    case 'task.cancelled':
      return { taskId, reason: 'user asked' };
    case 'task.deleted':
      return { taskId, ...(odd ? { reason: 'cleanup' } : {}) };
    case 'task.log':
      return { taskId, stream: STREAMS[v % STREAMS.length], text: `line ${m.logs.length + 1}` };
    case 'task.process_started':
      return { taskId, spawnId: `spn-${v}`, host: 'h1', pid: 100 + v, pgid: 100 + v, platform: 'linux' };
    case 'task.artifact_recorded':
      return { taskId, artifactId: `art-${v}`, name: 'stdout', path: `/tmp/${taskId}.out`, bytes: v };
    case 'task.completion_ready':
      return { taskId, outcome: OUTCOMES[m.state] ?? 'completed' };
    case 'task.completion_acknowledged':
      return { taskId, consumer: 'parent' };
  }
}

/** A walk spec over tasks of the given sessions (the n-th task goes to session n mod count). */
export function taskWalk(ids: IdGenerator, sessions: readonly string[]): WalkSpec<TaskState, TaskEventType, TaskModel> {
  let made = 0;
  return {
    lifecycle: taskLifecycle,
    streamType: 'task',
    prefer: 'task.log',
    create: () => ({
      taskId: ids.next('tsk'),
      sessionId: sessions[made++ % sessions.length]!,
      runId: ids.next('run'),
      parentTaskId: ids.next('tsk'),
      state: 'none',
      kind: '',
      deleted: false,
      completion: 'none',
      logs: [],
    }),
    streamId: (m) => m.taskId,
    data: taskData,
    taken(m, type, data) {
      if (type === 'task.submitted') m.kind = String(data.kind);
      if (type === 'task.deleted') m.deleted = true;
      if (type === 'task.completion_ready') m.completion = 'ready';
      if (type === 'task.completion_acknowledged') m.completion = 'acknowledged';
      if (type === 'task.log') m.logs.push({ stream: String(data.stream), text: String(data.text) });
    },
  };
}
