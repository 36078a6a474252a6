import type { TaskView } from '@demiurge/projector-task-board';
import { sleep } from './cli.js';
import type { LogReader, LogRow } from './log-reader.js';

// What a host left in its home's log and read models, read while it serves or after it died.

const TASK_RECOVERY_MS = 3_000;

/** The outcomes that settle a started tool call. */
export const TOOL_CALL_ENDS = new Set([
  'tool_call.succeeded',
  'tool_call.failed',
  'tool_call.cancelled',
  'tool_call.unknown',
]);
/** The outcomes that settle a delivery being sent. */
export const DELIVERY_SEND_ENDS = new Set([
  'delivery.sent',
  'delivery.failed',
  'delivery.unknown',
  'delivery.unrouted',
]);

/** Whether some stream got `opened` in `events` and none of `ends` after it: the kill came in between. */
export function openedNotClosed(events: readonly LogRow[], opened: string, ends: ReadonlySet<string>): boolean {
  const open = new Set<string>();
  for (const e of events) {
    if (e.type === opened) open.add(e.streamId);
    else if (ends.has(e.type)) open.delete(e.streamId);
  }
  return open.size > 0;
}

/** Check 4: every active task is worked by `owner` (polls while recovery settles); the others, described. */
export async function tasksNotOwnedBy(reader: LogReader, owner: string): Promise<string[]> {
  const deadline = Date.now() + TASK_RECOVERY_MS;
  for (;;) {
    const wrong = reader
      .docs<TaskView>('task-board', 'tasks')
      .filter((t) => t.status === 'active' && t.worker !== owner)
      .map((t) => `task ${t.taskId} (run ${t.runId ?? '-'}) is active with worker ${t.worker ?? 'none'}, not ${owner}`);
    if (wrong.length === 0 || Date.now() > deadline) return wrong;
    await sleep(100);
  }
}

/**
 * Waits (up to `ms`) until no run is live and no task is created or active — what a host recovers at once
 * from a dead owner; what is still busy then, described.
 */
export async function settle(reader: LogReader, ms: number): Promise<string[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const busy = {
      'live runs': reader.count('runs', 'live-runs'),
      'created tasks': reader.count('task-board', 'tasks', 'created'),
      'active tasks': reader.count('task-board', 'tasks', 'active'),
    };
    const left = Object.entries(busy).filter(([, n]) => n > 0);
    if (left.length === 0) return [];
    if (Date.now() > deadline) return [`after ${ms} ms: ${left.map(([what, n]) => `${n} ${what}`).join(', ')}`];
    await sleep(200);
  }
}

interface DeliveryDoc {
  readonly deliveryId: string;
  readonly workId: string;
  readonly channel: string;
  readonly status: string;
}
interface WorkDoc {
  readonly status: string;
  readonly owner: string | null;
  readonly leaseUntil: string | null;
}

/**
 * Deliveries still `queued` or `sending` (not unrouted, failed, sent or unknown), each with its work item's
 * status and claim: a claim by a host that is gone is only recovered by a host start after its lease.
 */
export function pendingDeliveries(reader: LogReader, owner: string): string[] {
  return reader
    .docs<DeliveryDoc>('outbox', 'deliveries')
    .filter((d) => d.status === 'queued' || d.status === 'sending')
    .map((d) => {
      const work = reader.doc<WorkDoc>('work-items', 'items', d.workId);
      const claim = work?.owner
        ? `claimed by ${work.owner === owner ? 'this host' : `${work.owner} (gone)`} until ${work.leaseUntil}`
        : 'not claimed';
      return `${d.channel} delivery ${d.deliveryId} is ${d.status}; its work ${d.workId} is ${work?.status ?? 'missing'}, ${claim}`;
    });
}
