import { isEvent } from '@demiurge/contracts';
import type { SweepLog } from './sweep-log.js';

const OPEN_RUN = new Set(['queued', 'running', 'cancelling']);
const OPEN_WORK = new Set(['queued', 'claimed', 'running', 'sending', 'retry_scheduled']);
const SETTLED_TASK = new Set(['completed', 'failed', 'cancelled', 'deleted', 'archived', 'waiting', 'blocked']);
const TURN_ENDS = ['turn.completed', 'turn.failed', 'turn.cancelled'] as const;

/**
 * What is still in motion on a home, from its log and read models: turns without an end, runs queued, running or
 * cancelling, tasks not settled, work items someone still has to do, task notices not yet taken by a turn.
 * Empty: the host has nothing left to do on its own.
 */
export async function openItems(log: SweepLog): Promise<string[]> {
  const open: string[] = [];
  const ended = new Set((await log.events(...TURN_ENDS)).map((e) => e.streamId));
  for (const e of await log.events('turn.started')) {
    if (!ended.has(e.streamId)) open.push(`turn ${e.streamId} has not ended`);
  }
  for (const run of await log.runs()) {
    if (OPEN_RUN.has(run.status)) open.push(`run ${run.runId} is ${run.status}`);
  }
  for (const task of await log.tasks()) {
    if (!SETTLED_TASK.has(task.status)) open.push(`task ${task.taskId} (${task.kind}) is ${task.status}`);
  }
  for (const item of await log.workItems()) {
    if (OPEN_WORK.has(item.status)) open.push(`work ${item.workId} (${item.kind}) is ${item.status}`);
  }
  const acknowledged = new Set((await log.events('task.completion_acknowledged')).map((e) => e.streamId));
  for (const e of await log.events('task.completion_ready')) {
    if (!acknowledged.has(e.streamId)) open.push(`task ${e.streamId}'s completion notice is not taken`);
  }
  return open;
}

/** How the turn ended (`turn.completed`, `turn.failed`, `turn.cancelled`), or undefined while it has not. */
export async function turnEnd(log: SweepLog, turnId: string): Promise<string | undefined> {
  return (await log.stream(turnId)).find((e) => isEvent(e, ...TURN_ENDS))?.type;
}
