import {
  asDomainEvent,
  deliveryEvents,
  isEvent,
  type RecordedEvent,
  taskEvents,
  workEvents,
} from '@demiurge/contracts';
import {
  deliveryLifecycle,
  evolveTask,
  evolveWork,
  initialTaskFacts,
  initialWorkFacts,
  type Lifecycle,
  NONE,
  type TaskState,
  taskLifecycle,
  type WorkState,
  workLifecycle,
} from '@demiurge/lifecycle';
import type { OperatorAggregate, OperatorError, OperatorItem, OperatorItemStatus } from './operator-status.view.js';

/** An item's status after an event, and the claim a work item holds then; undefined: the event changes nothing. */
export type ItemStep = { readonly status: OperatorItemStatus; readonly claimToken: string | null } | undefined;

/** What the operator view needs to know about one aggregate's events. */
export interface AggregateSpec {
  readonly aggregate: OperatorAggregate;
  readonly lifecycle: Lifecycle;
  /** The aggregate id an event names (undefined: not this aggregate's event). */
  idOf(event: RecordedEvent): string | undefined;
  /** Kind, label and session, from the creation event (undefined for any other event). */
  describe(
    event: RecordedEvent,
  ): { kind: string; label: string; sessionId: string | null; subject?: string } | undefined;
  /**
   * The item's next status by its aggregate's fold (`evolveWork`, `evolveTask`); without one, the machine's
   * `nextState`.
   */
  step?(item: OperatorItem | undefined, event: RecordedEvent): ItemStep;
  /** The statuses listed in `running`. */
  readonly running: readonly OperatorItemStatus[];
  /** The statuses listed in `needs-operator`. */
  readonly needsOperator: readonly OperatorItemStatus[];
}

const workTypes = workEvents.map((e) => e.type);
const taskTypes = taskEvents.map((e) => e.type);
const deliveryTypes = deliveryEvents.map((e) => e.type);

const work: AggregateSpec = {
  aggregate: 'work',
  lifecycle: workLifecycle,
  idOf: (event) => (isEvent(event, ...workTypes) ? event.data.workId : undefined),
  describe(event) {
    if (!isEvent(event, 'work.enqueued')) return undefined;
    const d = event.data;
    return { kind: d.kind, label: `${d.kind} for ${d.subjectId}`, sessionId: null, subject: d.subjectId };
  },
  // The work item fold: its status, and its claim fencing (an event naming a stale claim token changes nothing).
  step(item, event) {
    const facts = item
      ? { ...initialWorkFacts, status: item.status as WorkState, claimToken: item.claimToken ?? null }
      : initialWorkFacts;
    const next = evolveWork(facts, event);
    return next && next.status !== NONE ? { status: next.status, claimToken: next.claimToken } : undefined;
  },
  running: ['claimed', 'running', 'sending'],
  needsOperator: ['unknown', 'corrupt'],
};

const task: AggregateSpec = {
  aggregate: 'task',
  lifecycle: taskLifecycle,
  idOf: (event) => (isEvent(event, ...taskTypes) ? event.data.taskId : undefined),
  describe(event) {
    if (!isEvent(event, 'task.submitted')) return undefined;
    const d = event.data;
    return { kind: d.kind, label: d.title, sessionId: d.sessionId };
  },
  step(item, event) {
    const facts = item ? { ...initialTaskFacts, status: item.status as TaskState } : initialTaskFacts;
    const next = evolveTask(facts, event);
    return next && next.status !== NONE ? { status: next.status, claimToken: null } : undefined;
  },
  running: ['active'],
  needsOperator: [],
};

const delivery: AggregateSpec = {
  aggregate: 'delivery',
  lifecycle: deliveryLifecycle,
  idOf: (event) => (isEvent(event, ...deliveryTypes) ? event.data.deliveryId : undefined),
  describe(event) {
    if (!isEvent(event, 'delivery.queued')) return undefined;
    const d = event.data;
    return { kind: d.channel, label: `${d.channel} to ${d.conversationKey ?? d.sessionId}`, sessionId: d.sessionId };
  },
  running: [],
  needsOperator: ['unknown'],
};

const specs: Record<string, AggregateSpec> = { work, task, delivery };

/** The spec of an event's aggregate, by the event type's first segment (`work.claimed` → work). */
export const specOf = (type: string): AggregateSpec | undefined => specs[type.slice(0, type.indexOf('.'))];

/** The failure an event records: `task/work/delivery.failed`'s error, or `work.corrupt` as code `corrupt`. */
export function errorOf(recorded: RecordedEvent): OperatorError | undefined {
  const event = asDomainEvent(recorded);
  switch (event.type) {
    case 'task.failed':
    case 'work.failed':
    case 'delivery.failed':
      return event.data.error;
    case 'work.corrupt':
      return { code: 'corrupt', message: event.data.detail };
    default:
      return undefined;
  }
}

/** Why an item now needs an operator, from the event that put it there. */
export function operatorReason(recorded: RecordedEvent): string {
  const event = asDomainEvent(recorded);
  switch (event.type) {
    case 'work.unknown':
      return event.data.reason;
    case 'delivery.unknown':
      return event.data.reason;
    case 'work.corrupt':
      return event.data.detail;
    case 'work.lease_expired':
      return 'the lease expired while sending';
    default:
      return event.type;
  }
}
