import { NotFoundError } from '@demiurge/control-plane';
import type { EventStore } from '@demiurge/event-store';
import { type WorkItemView, workItemsReader } from '@demiurge/projector-work-items';
import { UsageError } from '../cli-errors.js';
import { orDash, shortJson, table } from '../format.js';
import { resolveHome } from '../home.js';
import type { CommandIo } from '../io.js';
import type { JsonOptions } from '../options.js';
import { cliRuntime } from '../runtime.js';
import { withRuntimeStore } from '../runtime-store.js';

export interface WorkListOptions extends JsonOptions {
  readonly kind?: string;
  readonly status?: string;
}

export interface WorkResolveOptions extends JsonOptions {
  readonly decision: 'sent' | 'failed' | 'retry';
  readonly note?: string;
  readonly retryAt?: string;
}

async function getWork(store: EventStore, id: string): Promise<WorkItemView> {
  const item = await workItemsReader(store).get(id);
  if (!item) throw new NotFoundError('work item', id);
  return item;
}

/** `demiurge work list`: every work item, optionally of one kind and status. */
export async function workList(o: WorkListOptions, io: CommandIo): Promise<void> {
  await withRuntimeStore(resolveHome(o.home), async (store) => {
    const work = (await workItemsReader(store).all()).filter(
      (w) => (!o.kind || w.kind === o.kind) && (!o.status || w.status === o.status),
    );
    if (o.json) return io.out(JSON.stringify({ work }));
    if (work.length === 0) return io.out('no work items');
    for (const line of table(work, [
      { heading: 'work', cell: (w) => w.workId },
      { heading: 'kind', cell: (w) => w.kind },
      { heading: 'status', cell: (w) => w.status },
      { heading: 'attempts', cell: (w) => String(w.attempts) },
      { heading: 'owner', cell: (w) => orDash(w.owner) },
      { heading: 'due', cell: (w) => w.dueAt },
      { heading: 'subject', cell: (w) => w.subjectId },
    ]))
      io.out(line);
  });
}

function renderWork(w: WorkItemView): string[] {
  return [
    `work ${w.workId}  ${w.kind} for ${w.subjectId}  [${w.status}]`,
    `  attempts ${w.attempts}, owner ${orDash(w.owner)}, lease until ${orDash(w.leaseUntil)}, next attempt ${orDash(w.nextAttemptAt)}`,
    `  enqueued ${w.enqueuedAt}, updated ${w.updatedAt}, due ${w.dueAt}`,
    `  payload ${shortJson(w.payload, 200)}`,
    ...(w.lastError ? [`  last error: ${w.lastError.code}: ${w.lastError.message}`] : []),
    ...(w.externalRef ? [`  external ref: ${w.externalRef}`] : []),
    `  allowed: ${w.allowed.join(', ') || '(none)'}`,
  ];
}

/** `demiurge work show ID`. */
export async function workShow(id: string, o: JsonOptions, io: CommandIo): Promise<void> {
  await withRuntimeStore(resolveHome(o.home), async (store) => {
    const work = await getWork(store, id);
    if (o.json) return io.out(JSON.stringify({ work }));
    for (const line of renderWork(work)) io.out(line);
  });
}

/** `demiurge work resolve ID`: an operator's decision on unknown work (DurableWorkRuntime.resolveUnknown). */
export async function workResolve(id: string, o: WorkResolveOptions, io: CommandIo): Promise<void> {
  if (o.retryAt && o.decision !== 'retry') throw new UsageError('--retry-at goes with --decision retry');
  await withRuntimeStore(resolveHome(o.home), async (store) => {
    await getWork(store, id);
    await cliRuntime(store).resolveUnknownWork(id, o.decision, {
      ...(o.note ? { note: o.note } : {}),
      ...(o.retryAt ? { retryAt: o.retryAt } : {}),
    });
    const work = await getWork(store, id);
    if (o.json) return io.out(JSON.stringify({ work }));
    io.out(`work ${work.workId}: ${work.status} (decision ${o.decision})`);
  });
}
