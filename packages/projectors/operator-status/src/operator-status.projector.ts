import { asDomainEvent, deliveryEvents, type RecordedEvent, taskEvents, workEvents } from '@demiurge/contracts';
import { defineProjector, type ProjectionTx } from '@demiurge/event-store';
import { allowedEvents, NONE, nextState } from '@demiurge/lifecycle';
import { type AggregateSpec, errorOf, type ItemStep, operatorReason, specOf } from './aggregates.js';
import {
  OperatorStatusCollections as C,
  countKey,
  LAST_ERROR_ID,
  type LastError,
  type NeedsOperatorEntry,
  type OperatorItem,
  type OperatorItemStatus,
  operatorItemKey,
  type PendingCompletion,
  type RunningEntry,
} from './operator-status.view.js';

/** The item's next status by its machine alone (an aggregate without a fold here). */
function machineStep(spec: AggregateSpec, item: OperatorItem | undefined, event: RecordedEvent): ItemStep {
  const to = nextState(spec.lifecycle, item?.status ?? NONE, { type: event.type, data: event.data }) as
    | OperatorItemStatus
    | typeof NONE
    | undefined;
  return to === undefined || to === NONE ? undefined : { status: to, claimToken: null };
}

function addCount(tx: ProjectionTx, item: OperatorItem, delta: number): void {
  const key = countKey(item.aggregate, item.kind, item.status);
  const count = (tx.get<number>(C.counts, key) ?? 0) + delta;
  if (count > 0) tx.put(C.counts, key, count);
  else tx.delete(C.counts, key);
}

/** Moves the item's count, `running` and `needs-operator` entries after a status change. */
function moveStatus(
  tx: ProjectionTx,
  spec: AggregateSpec,
  before: OperatorItem | undefined,
  after: OperatorItem,
  event: RecordedEvent,
): void {
  if (before) addCount(tx, before, -1);
  addCount(tx, after, +1);
  const key = operatorItemKey(after.aggregate, after.id);
  if (spec.running.includes(after.status)) {
    const entry: RunningEntry = {
      aggregate: after.aggregate as RunningEntry['aggregate'],
      id: after.id,
      kind: after.kind,
      status: after.status,
      since: event.recordedAt,
    };
    tx.put(C.running, key, entry);
  } else if (before && spec.running.includes(before.status)) {
    tx.delete(C.running, key);
  }
  if (spec.needsOperator.includes(after.status)) {
    const entry: NeedsOperatorEntry = {
      aggregate: after.aggregate as NeedsOperatorEntry['aggregate'],
      id: after.id,
      kind: after.kind,
      status: after.status as NeedsOperatorEntry['status'],
      reason: operatorReason(event),
      since: event.recordedAt,
      allowed: after.allowed,
    };
    tx.put(C.needsOperator, key, entry);
  } else if (before && spec.needsOperator.includes(before.status)) {
    tx.delete(C.needsOperator, key);
  }
}

/**
 * A notice is pending from task.completion_ready (the task ended, or is blocked) until the parent
 * acknowledges it, or until the task is deleted or archived (its notices are settled in that commit).
 */
function trackCompletion(tx: ProjectionTx, recorded: RecordedEvent, task: OperatorItem): void {
  const event = asDomainEvent(recorded);
  if (event.type === 'task.completion_ready') {
    const d = event.data;
    const entry: PendingCompletion = {
      taskId: task.id,
      sessionId: task.sessionId ?? '',
      outcome: d.outcome,
      ...(d.workId ? { workId: d.workId } : {}),
      readyAt: event.recordedAt,
    };
    tx.put(C.pendingCompletions, task.id, entry);
  } else if (event.type === 'task.completion_acknowledged') {
    // The latest notice of the task is the pending one: an acknowledgement of an earlier one leaves it.
    const acked = event.data.workId;
    const entry = tx.get<PendingCompletion>(C.pendingCompletions, task.id);
    if (!acked || !entry?.workId || entry.workId === acked) tx.delete(C.pendingCompletions, task.id);
  } else if (event.type === 'task.deleted' || event.type === 'task.archived') {
    tx.delete(C.pendingCompletions, task.id);
  }
}

/** A notice settled without delivery (its work item cancelled, e.g. its session archived) is no longer pending. */
function settleNotice(tx: ProjectionTx, taskId: string, workId: string): void {
  const entry = tx.get<PendingCompletion>(C.pendingCompletions, taskId);
  if (entry?.workId === workId) tx.delete(C.pendingCompletions, taskId);
}

/**
 * One operator-readable view across work items, tasks and the outbox: counts by aggregate, kind and
 * status; running work and active tasks; pending task completions; unknown effects and corrupt work
 * that need an operator, with the actions their machine allows; and the last error. Statuses come
 * from the aggregates' folds (`evolveWork`, `evolveTask`; deliveries from their machine, `nextState`): an
 * event refused, one naming a stale claim token of a work item, or one for an item never created, leaves the
 * view unchanged. It keeps its own per-item state (`items`) and reads no other projector.
 */
export const operatorStatusProjector = defineProjector({
  name: 'operator-status',
  // 2: notices of blocked tasks, acknowledgements per notice (workId), allowed lists of tasks changed.
  // 3: work items follow the work item fold: a leased item keeps its claim token, an event naming a stale one is skipped.
  version: 3,
  // It serves people only (status, the gateway's status frames): applied after the commit, with a bounded lag;
  // every read through the store's projection() is caught up first (see docs/performance.md).
  mode: 'async',
  handles: [...workEvents, ...taskEvents, ...deliveryEvents].map((e) => e.type),
  apply(event, tx) {
    const spec = specOf(event.type);
    if (!spec) return;
    const id = spec.idOf(event);
    if (id === undefined) return;
    const key = operatorItemKey(spec.aggregate, id);
    const item = tx.get<OperatorItem>(C.items, key);
    const step = spec.step ? spec.step(item, event) : machineStep(spec, item, event);
    if (step === undefined) return;
    const to = step.status;
    const error = errorOf(event);
    const described = item ?? spec.describe(event);
    if (!described) return;
    const { kind, label, sessionId, subject } = described;
    const next: OperatorItem = {
      aggregate: spec.aggregate,
      id,
      kind,
      status: to,
      allowed: allowedEvents(spec.lifecycle, to),
      label,
      sessionId,
      ...(subject === undefined ? {} : { subject }),
      updatedAt: event.recordedAt,
      ...(step.claimToken === null ? {} : { claimToken: step.claimToken }),
      lastError: error ?? item?.lastError ?? null,
    };
    tx.put(C.items, key, next);
    if (item?.status !== to) moveStatus(tx, spec, item, next, event);
    if (error) {
      const last: LastError = { aggregate: spec.aggregate, id, error, at: event.recordedAt };
      tx.put(C.lastError, LAST_ERROR_ID, last);
    }
    if (spec.aggregate === 'task') trackCompletion(tx, event, next);
    if (event.type === 'work.cancelled' && kind === 'task.completion' && subject) settleNotice(tx, subject, id);
  },
});
