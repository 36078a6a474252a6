import type { LogReader } from '../log-reader.js';

const OPEN_RUN = new Set(['queued', 'running', 'cancelling']);
const OPEN_WORK = new Set(['queued', 'claimed', 'running', 'sending', 'retry_scheduled']);
const SETTLED_TASK = new Set(['completed', 'failed', 'cancelled', 'deleted', 'archived', 'waiting', 'blocked']);
const TURN_ENDS = new Set(['turn.completed', 'turn.failed', 'turn.cancelled']);

/**
 * What is still in motion on a home, from its log and read models: turns without an end, runs queued, running or
 * cancelling, tasks not settled, work items someone still has to do, task notices not yet taken by a turn.
 * Empty: the host has nothing left to do on its own.
 */
export function openItems(reader: LogReader): string[] {
  const open: string[] = [];
  const ended = new Set(
    reader
      .events()
      .filter((e) => TURN_ENDS.has(e.type))
      .map((e) => e.streamId),
  );
  for (const e of reader.events(1, 'turn.started')) {
    if (!ended.has(e.streamId)) open.push(`turn ${e.streamId} has not ended`);
  }
  for (const run of reader.docs<{ runId: string; status: string }>('runs', 'runs')) {
    if (OPEN_RUN.has(run.status)) open.push(`run ${run.runId} is ${run.status}`);
  }
  for (const task of reader.docs<{ taskId: string; kind: string; status: string }>('task-board', 'tasks')) {
    if (!SETTLED_TASK.has(task.status)) open.push(`task ${task.taskId} (${task.kind}) is ${task.status}`);
  }
  for (const item of reader.docs<{ workId: string; kind: string; status: string }>('work-items', 'items')) {
    if (OPEN_WORK.has(item.status)) open.push(`work ${item.workId} (${item.kind}) is ${item.status}`);
  }
  const acknowledged = new Set(reader.events(1, 'task.completion_acknowledged').map((e) => e.streamId));
  for (const e of reader.events(1, 'task.completion_ready')) {
    if (!acknowledged.has(e.streamId)) open.push(`task ${e.streamId}'s completion notice is not taken`);
  }
  return open;
}

/** Whether the turn has an end event (completed, failed or cancelled). */
export function turnEnded(reader: LogReader, turnId: string): boolean {
  return reader.stream(turnId).some((e) => TURN_ENDS.has(e.type));
}
