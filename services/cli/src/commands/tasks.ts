import { NotFoundError, type RuntimeControlPlane, type TaskRef } from '@demiurge/control-plane';
import type { EventStore } from '@demiurge/event-store';
import { type TaskView, taskBoardReader } from '@demiurge/projector-task-board';
import { orDash, shorten, table } from '../format.js';
import { resolveHome } from '../home.js';
import type { CommandIo } from '../io.js';
import type { JsonOptions } from '../options.js';
import { cliRuntime } from '../runtime.js';
import { withRuntimeStore } from '../runtime-store.js';

export interface TasksListOptions extends JsonOptions {
  readonly session?: string;
  readonly all: boolean;
}

export interface TaskReasonOptions extends JsonOptions {
  readonly reason?: string;
}

async function getTask(store: EventStore, id: string): Promise<TaskView> {
  const task = await taskBoardReader(store).get(id);
  if (!task) throw new NotFoundError('task', id);
  return task;
}

/** `demiurge tasks list`: every task (or one session's), deleted ones only with `all`. */
export async function tasksList(o: TasksListOptions, io: CommandIo): Promise<void> {
  await withRuntimeStore(resolveHome(o.home), async (store) => {
    const tasks = o.session
      ? await cliRuntime(store).controlPlane.listTasks(o.session, { includeHidden: o.all })
      : (await taskBoardReader(store).all()).filter((t) => o.all || !t.hidden);
    if (o.json) return io.out(JSON.stringify({ tasks }));
    if (tasks.length === 0) return io.out('no tasks');
    for (const line of table(tasks, [
      { heading: 'task', cell: (t) => t.taskId },
      { heading: 'session', cell: (t) => t.sessionId },
      { heading: 'kind', cell: (t) => t.kind },
      { heading: 'status', cell: (t) => `${t.status}${t.hidden ? ' (hidden)' : ''}` },
      { heading: 'lane', cell: (t) => orDash(t.lane) },
      { heading: 'run', cell: (t) => orDash(t.runId) },
      { heading: 'title', cell: (t) => shorten(t.title, 50) },
    ]))
      io.out(line);
  });
}

function renderTask(t: TaskView): string[] {
  const lines = [
    `task ${t.taskId}  "${t.title}"  [${t.status}]${t.hidden ? ' (hidden)' : ''}`,
    `  kind ${t.kind}, session ${t.sessionId}, run ${orDash(t.runId)}, parent ${orDash(t.parentTaskId)}, lane ${orDash(t.lane)}`,
    `  submitted ${t.submittedAt}, updated ${t.updatedAt}, worker ${orDash(t.worker)}, completion ${t.completion}`,
    `  input ${JSON.stringify(t.input)}`,
  ];
  if (t.blocked) lines.push(`  blocked: ${t.blocked.reason} (resumable: ${t.blocked.resumable})`);
  if (t.cancelReason) lines.push(`  cancelled: ${t.cancelReason}`);
  if (t.error) lines.push(`  error: ${t.error.code}: ${t.error.message}`);
  if (t.exitCode !== null) lines.push(`  exit code ${t.exitCode}`);
  if (t.summary) lines.push(`  summary: ${t.summary}`);
  if (t.process) lines.push(`  process pid ${t.process.pid} on ${t.process.host} (${t.process.platform})`);
  for (const a of t.artifacts) lines.push(`  artifact ${a.name}: ${a.path} (${a.bytes} bytes)`);
  if (t.logTail.length > 0) {
    lines.push('  log tail:');
    for (const l of t.logTail) lines.push(`    ${l.stream.padEnd(8)} ${l.text}`);
  }
  lines.push(`  allowed: ${t.allowed.join(', ') || '(none)'}`);
  return lines;
}

/** `demiurge tasks show ID`: deleted tasks too (kept for audit). */
export async function tasksShow(id: string, o: JsonOptions, io: CommandIo): Promise<void> {
  await withRuntimeStore(resolveHome(o.home), async (store) => {
    const task = await getTask(store, id);
    if (o.json) return io.out(JSON.stringify({ task }));
    for (const line of renderTask(task)) io.out(line);
  });
}

/** Looks the task up on the board for its session (the control plane is session-scoped), then runs the command. */
export function tasksCancel(id: string, o: TaskReasonOptions, io: CommandIo): Promise<void> {
  return tasksControl(id, o, io, (cp, ref) => cp.cancelTask(ref, o.reason ?? 'cancelled by the operator (cli)'));
}

export function tasksDelete(id: string, o: TaskReasonOptions, io: CommandIo): Promise<void> {
  return tasksControl(id, o, io, (cp, ref) => cp.deleteTask(ref, o.reason));
}

export function tasksArchive(id: string, o: JsonOptions, io: CommandIo): Promise<void> {
  return tasksControl(id, o, io, (cp, ref) => cp.archiveTask(ref));
}

export interface TaskAckOptions extends JsonOptions {
  readonly session: string;
}

/**
 * `demiurge tasks ack ID --session S`: acknowledges the task's pending notices for session S (an operator
 * dismissing them: no completion turn carries them). Only the task's own session: any other is refused.
 */
export async function tasksAck(id: string, o: TaskAckOptions, io: CommandIo): Promise<void> {
  await withRuntimeStore(resolveHome(o.home), async (store) => {
    await getTask(store, id);
    const acknowledged = await cliRuntime(store).host.acknowledgeTaskNotices(id, {
      sessionId: o.session,
      via: 'operator (cli)',
    });
    const task = await getTask(store, id);
    if (o.json) return io.out(JSON.stringify({ task, acknowledged }));
    io.out(
      `task ${task.taskId}: ${acknowledged} notice${acknowledged === 1 ? '' : 's'} acknowledged for session ${o.session}, completion ${task.completion}`,
    );
  });
}

async function tasksControl(
  id: string,
  o: JsonOptions,
  io: CommandIo,
  run: (cp: RuntimeControlPlane, ref: TaskRef) => Promise<TaskView>,
): Promise<void> {
  await withRuntimeStore(resolveHome(o.home), async (store) => {
    const { sessionId } = await getTask(store, id);
    const task = await run(cliRuntime(store).controlPlane, { sessionId, taskId: id });
    if (o.json) return io.out(JSON.stringify({ task }));
    io.out(`task ${task.taskId}: ${task.status}, lane ${orDash(task.lane)}${task.hidden ? ', hidden' : ''}`);
  });
}
