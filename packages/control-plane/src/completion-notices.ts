import { type Clock, type IdGenerator, isEvent, type NewEvent, type RecordedEvent } from '@demiurge/contracts';
import { type AppendStream, type EventStore, loadAggregate, streamAppend } from '@demiurge/event-store';
import {
  allowedEvents,
  checkEvents,
  type TaskEventType,
  taskFold,
  taskLifecycle,
  type WorkEventType,
  workLifecycle,
} from '@demiurge/lifecycle';
import { type TaskView, taskBoardReader } from '@demiurge/projector-task-board';
import { type ClaimableEntry, leasedKey, waitingPrefix, workItemsReader } from '@demiurge/projector-work-items';
import { OutOfScopeError } from './errors.js';
import { WorkKind } from './kinds.js';
import { loadWork } from './work-aggregate.js';

/** What a notice tells its parent: the task ended (`completed`, `failed`, `cancelled`) or is `blocked`. */
export type NoticeOutcome = 'completed' | 'failed' | 'cancelled' | 'blocked';

/** Who acknowledges a notice: a session (the scope) and how (`yield_until`, `turn trn_…`). */
export interface CompletionConsumer {
  readonly sessionId: string;
  readonly via: string;
}

/**
 * The work id of a task's final completion notice: derived from the task id (one per task), so a consumer
 * waiting on one task (`yield_until`) can claim exactly its notice. A blocked task's notices get fresh ids.
 */
export function completionWorkId(taskId: string): string {
  return `wrk_${taskId.slice(taskId.indexOf('_') + 1)}`;
}

/** One notice of a task as its stream records it. */
export interface NoticeRecord {
  readonly workId: string;
  /** The log position of its `task.completion_ready`. */
  readonly position: number;
  readonly outcome: NoticeOutcome;
  readonly acknowledged: boolean;
}

/** The notices a task stream records (`task.completion_ready`), each with whether it was acknowledged. */
export function noticeRecords(events: readonly RecordedEvent[], taskId: string): NoticeRecord[] {
  const notices = new Map<string, NoticeRecord>();
  for (const event of events) {
    if (!isEvent(event, 'task.completion_ready', 'task.completion_acknowledged')) continue;
    const workId = event.data.workId ?? completionWorkId(taskId);
    if (event.type === 'task.completion_ready') {
      notices.set(workId, { workId, position: event.position, outcome: event.data.outcome, acknowledged: false });
    } else {
      const notice = notices.get(workId);
      if (notice) notices.set(workId, { ...notice, acknowledged: true });
    }
  }
  return [...notices.values()];
}

/**
 * Refuses an acknowledgement outside the notice's origin scope: only the session that submitted the task
 * (its parent) may acknowledge its notices.
 */
export function assertCompletionScope(
  taskId: string,
  taskSessionId: string | null,
  consumer: CompletionConsumer,
): void {
  if (taskSessionId !== consumer.sessionId) {
    throw new OutOfScopeError(
      `the completion of task ${taskId} belongs to session ${taskSessionId ?? '(unknown)'}; ` +
        `session ${consumer.sessionId} (${consumer.via}) cannot acknowledge it: a completion is acknowledged only in the session that submitted the task`,
      { taskId, scope: taskSessionId ?? '', presented: consumer.sessionId },
    );
  }
}

/** The text a parent's model reads for a notice: the task, its outcome, summary or error, exit code, artifacts. */
export function renderNotice(task: TaskView, outcome: NoticeOutcome): string {
  const head = `Task ${task.taskId} "${task.title}" (${task.kind})`;
  const lines: string[] = [];
  if (outcome === 'blocked') {
    const reason = task.blocked?.reason ?? 'no reason was recorded';
    lines.push(`[task blocked] ${head} is blocked and needs the user: ${reason}.`);
    if (task.status !== 'blocked') lines.push(`It has moved on since: it is ${task.status} now.`);
    else if (task.blocked && !task.blocked.resumable) lines.push('It cannot resume; cancel it with task_control.');
    else lines.push('It continues once the user unblocks it.');
  } else {
    lines.push(`[task completion] ${head} ${outcome}.`);
    if (task.summary) lines.push(`Summary: ${task.summary}`);
    if (task.error) lines.push(`Error: ${task.error.code}: ${task.error.message}`);
    if (task.cancelReason) lines.push(`Reason: ${task.cancelReason}`);
  }
  if (task.exitCode !== null) lines.push(`Exit code: ${task.exitCode}`);
  if (task.artifacts.length > 0) {
    lines.push(`Artifacts: ${task.artifacts.map((a) => `${a.name} ${a.path} (${a.bytes} bytes)`).join('; ')}`);
  }
  return lines.join('\n');
}

/** A notice nobody has acknowledged yet, with the text its parent's model reads. */
export interface PendingNotice {
  readonly workId: string;
  readonly taskId: string;
  /** The task's session: the parent that is told. */
  readonly sessionId: string;
  readonly outcome: NoticeOutcome;
  /** When its work item became due (the task's end or block). */
  readonly dueAt: string;
  /** The log position of its `task.completion_ready` (orders notices due at the same time). */
  readonly position: number;
  readonly text: string;
  /** Its task was deleted or archived (an old log): it is settled, never delivered. */
  readonly orphaned: boolean;
}

export interface NoticeDeps {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  /** Who takes notices (written on the claim of each). */
  readonly owner: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The notices waiting for their parent, oldest first: due `task.completion` items that nobody holds
 * (queued, retry_scheduled, or claimed by a claimant whose lease ran out), optionally of one session.
 */
export async function pendingNotices(deps: NoticeDeps, options: { sessionId?: string } = {}): Promise<PendingNotice[]> {
  const now = iso(deps.clock.now());
  const work = workItemsReader(deps.store);
  const tasks = taskBoardReader(deps.store);
  const kind = WorkKind.taskCompletion;
  const due = (await work.queue.list({ prefix: waitingPrefix(kind) })) as ClaimableEntry[];
  const candidates = due.filter((e) => e.dueAt <= now).map((e) => e.workId);
  // Leases list by expiry, oldest first: only the expired head can hold a notice nobody works on.
  for (let after: string | undefined; ; ) {
    const page = (await work.leased({ kind, limit: 200, after })).entries;
    const expired = page.filter((l) => l.leaseUntil < now);
    for (const l of expired) if (l.status !== 'sending') candidates.push(l.workId);
    if (page.length < 200 || expired.length < page.length) break;
    after = leasedKey(kind, page[page.length - 1]!.leaseUntil, page[page.length - 1]!.workId);
  }
  const notices: PendingNotice[] = [];
  for (const workId of candidates) {
    const item = await work.get(workId);
    const taskId = (item?.payload as { taskId?: string } | null)?.taskId;
    if (!item || !taskId) continue;
    const task = await tasks.get(taskId);
    if (!task || (options.sessionId !== undefined && task.sessionId !== options.sessionId)) continue;
    const record = noticeRecords(await deps.store.readStream(taskId), taskId).find((n) => n.workId === workId);
    const outcome = record?.outcome ?? (task.status === 'blocked' ? 'blocked' : (task.status as NoticeOutcome));
    notices.push({
      workId,
      taskId,
      sessionId: task.sessionId,
      outcome,
      dueAt: item.dueAt,
      position: record?.position ?? 0,
      text: renderNotice(task, outcome),
      orphaned: task.status === 'deleted' || task.status === 'archived',
    });
  }
  return notices.sort((a, b) => a.dueAt.localeCompare(b.dueAt) || a.position - b.position);
}

/** Notices taken for one admission: what the model reads, and the streams that acknowledge them. */
export interface TakenNotices {
  readonly notices: readonly PendingNotice[];
  /** Claim + acknowledge of each work item, `task.completion_acknowledged` on each task: append them together. */
  readonly streams: readonly AppendStream[];
}

/**
 * Takes the session's pending notices for a commit of the caller's (a turn's admission): for each, the work
 * item is claimed and acknowledged and the task records `task.completion_acknowledged`, all machine-checked
 * at the versions read here. Appended with the admission, a notice is delivered exactly when the turn is
 * admitted; a concurrent consumer makes the append conflict instead of delivering twice.
 */
export async function takeNotices(
  deps: NoticeDeps,
  consumer: CompletionConsumer,
  options: { taskId?: string; leaseMs?: number } = {},
): Promise<TakenNotices> {
  const leaseMs = options.leaseMs ?? 30_000;
  const pending = (await pendingNotices(deps, { sessionId: consumer.sessionId })).filter(
    (n) => !n.orphaned && (options.taskId === undefined || n.taskId === options.taskId),
  );
  const now = deps.clock.now();
  const taken: PendingNotice[] = [];
  const streams: AppendStream[] = [];
  const byTask = new Map<string, PendingNotice[]>();
  for (const notice of pending) byTask.set(notice.taskId, [...(byTask.get(notice.taskId) ?? []), notice]);
  for (const [taskId, notices] of byTask) {
    const task = await loadAggregate(deps.store, taskFold, taskId);
    assertCompletionScope(taskId, task.state.sessionId, consumer);
    const workStreams: AppendStream[] = [];
    const acks: NewEvent<TaskEventType>[] = [];
    for (const notice of notices) {
      const item = await loadWork(deps.store, notice.workId);
      const expired = item.state !== 'sending' && item.leaseUntil !== null && item.leaseUntil < iso(now);
      if (item.state !== 'queued' && item.state !== 'retry_scheduled' && !expired) continue;
      const claimToken = deps.ids.next('clm');
      const events: NewEvent<WorkEventType>[] = [];
      if (expired) {
        events.push({
          type: 'work.lease_expired',
          data: { workId: notice.workId, claimToken: item.claimToken!, attempt: item.attempt },
        });
      }
      events.push(
        {
          type: 'work.claimed',
          data: {
            workId: notice.workId,
            claimToken,
            attempt: item.attempt + 1,
            owner: deps.owner,
            leaseUntil: iso(now + leaseMs),
          },
        },
        { type: 'work.acknowledged', data: { workId: notice.workId, claimToken } },
      );
      workStreams.push(
        streamAppend(workLifecycle.streamType, item, checkEvents(workLifecycle, item.state, events, item.streamId)),
      );
      acks.push({
        type: 'task.completion_acknowledged',
        data: { taskId, consumer: `session ${consumer.sessionId} (${consumer.via})`, workId: notice.workId },
      });
      taken.push(notice);
    }
    if (acks.length === 0) continue;
    // A task whose machine refuses the acknowledgement now is left out (its notices stay for the loop to
    // settle), so one odd task never blocks the admission of the session's input.
    if (!allowedEvents(taskLifecycle, task.state.status).includes('task.completion_acknowledged')) {
      taken.splice(taken.length - acks.length, acks.length);
      continue;
    }
    streams.push(
      ...workStreams,
      streamAppend(taskLifecycle.streamType, task, checkEvents(taskLifecycle, task.state.status, acks, taskId)),
    );
  }
  return { notices: taken, streams };
}
