import type {
  DeliveryQueued,
  DeliveryUnknown,
  EventData,
  RecordedEvent,
  TaskSubmitted,
  WorkCorrupt,
  WorkEnqueued,
  WorkUnknown,
} from '@demiurge/contracts';
import { deliveryLifecycle, type Lifecycle, taskLifecycle, workLifecycle } from '@demiurge/lifecycle';
import type { OperatorAggregate, OperatorError, OperatorItemStatus } from './operator-status.view.js';

/** What the operator view needs to know about one aggregate's events. */
export interface AggregateSpec {
  readonly aggregate: OperatorAggregate;
  readonly lifecycle: Lifecycle;
  /** The aggregate id an event's data names. */
  idOf(data: unknown): string;
  /** Kind, label and session, from the creation event's data. */
  describe(data: unknown): { kind: string; label: string; sessionId: string | null; subject?: string };
  /** The statuses listed in `running`. */
  readonly running: readonly OperatorItemStatus[];
  /** The statuses listed in `needs-operator`. */
  readonly needsOperator: readonly OperatorItemStatus[];
}

const work: AggregateSpec = {
  aggregate: 'work',
  lifecycle: workLifecycle,
  idOf: (data) => (data as { workId: string }).workId,
  describe(data) {
    const d = data as EventData<typeof WorkEnqueued>;
    return { kind: d.kind, label: `${d.kind} for ${d.subjectId}`, sessionId: null, subject: d.subjectId };
  },
  running: ['claimed', 'running', 'sending'],
  needsOperator: ['unknown', 'corrupt'],
};

const task: AggregateSpec = {
  aggregate: 'task',
  lifecycle: taskLifecycle,
  idOf: (data) => (data as { taskId: string }).taskId,
  describe(data) {
    const d = data as EventData<typeof TaskSubmitted>;
    return { kind: d.kind, label: d.title, sessionId: d.sessionId };
  },
  running: ['active'],
  needsOperator: [],
};

const delivery: AggregateSpec = {
  aggregate: 'delivery',
  lifecycle: deliveryLifecycle,
  idOf: (data) => (data as { deliveryId: string }).deliveryId,
  describe(data) {
    const d = data as EventData<typeof DeliveryQueued>;
    return { kind: d.channel, label: `${d.channel} to ${d.conversationKey ?? d.sessionId}`, sessionId: d.sessionId };
  },
  running: [],
  needsOperator: ['unknown'],
};

const specs: Record<string, AggregateSpec> = { work, task, delivery };

/** The spec of an event's aggregate, by the event type's first segment (`work.claimed` → work). */
export const specOf = (type: string): AggregateSpec | undefined => specs[type.slice(0, type.indexOf('.'))];

/** The failure an event records: `task/work/delivery.failed`'s error, or `work.corrupt` as code `corrupt`. */
export function errorOf(event: RecordedEvent): OperatorError | undefined {
  switch (event.type) {
    case 'task.failed':
    case 'work.failed':
    case 'delivery.failed':
      return (event.data as { error: OperatorError }).error;
    case 'work.corrupt':
      return { code: 'corrupt', message: (event.data as EventData<typeof WorkCorrupt>).detail };
    default:
      return undefined;
  }
}

/** Why an item now needs an operator, from the event that put it there. */
export function operatorReason(event: RecordedEvent): string {
  switch (event.type) {
    case 'work.unknown':
      return (event.data as EventData<typeof WorkUnknown>).reason;
    case 'delivery.unknown':
      return (event.data as EventData<typeof DeliveryUnknown>).reason;
    case 'work.corrupt':
      return (event.data as EventData<typeof WorkCorrupt>).detail;
    case 'work.lease_expired':
      return 'the lease expired while sending';
    default:
      return event.type;
  }
}
