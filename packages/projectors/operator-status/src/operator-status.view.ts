import type { DeliveryState, TaskState, WorkState } from '@demiurge/lifecycle';

/** The aggregates the operator view follows. */
export type OperatorAggregate = 'work' | 'task' | 'delivery';

/** A status of any of them (never the pre-creation `none`). */
export type OperatorItemStatus = Exclude<WorkState | TaskState | DeliveryState, 'none'>;

/** A failure as the events carry it. */
export interface OperatorError {
  readonly code: string;
  readonly message: string;
}

/** The minimal state the operator view keeps per work item, task and delivery. */
export interface OperatorItem {
  readonly aggregate: OperatorAggregate;
  /** The work, task or delivery id. */
  readonly id: string;
  /** The work kind, the task kind, or the delivery's channel. */
  readonly kind: string;
  readonly status: OperatorItemStatus;
  /** `allowedEvents(<its lifecycle>, status)`: the actions an operator surface may offer. */
  readonly allowed: readonly string[];
  /** A short human label: the task title, `<kind> for <subject>`, `<channel> to <conversation>`. */
  readonly label: string;
  /** The session of a task or delivery (null for work items). */
  readonly sessionId: string | null;
  /** A work item's subject (`subjectId`: the task of a `task.completion` notice...). */
  readonly subject?: string;
  readonly updatedAt: string;
  /** A work item's current claim token while claimed, running or sending (the work item fold's claim fencing). */
  readonly claimToken?: string;
  /** The last failure recorded on it (`*.failed`, or `work.corrupt` as `{ code: 'corrupt' }`). */
  readonly lastError: OperatorError | null;
}

/** An entry of `running`: work that is claimed, running or sending, or an active task. */
export interface RunningEntry {
  readonly aggregate: 'work' | 'task';
  readonly id: string;
  readonly kind: string;
  readonly status: OperatorItemStatus;
  /** When it entered its current status. */
  readonly since: string;
}

/** An entry of `pending-completions`: a finished task whose completion notice awaits its parent's ack. */
export interface PendingCompletion {
  readonly taskId: string;
  readonly sessionId: string;
  /** `blocked`: the task needs the user (a notice of a live task). */
  readonly outcome: 'completed' | 'failed' | 'cancelled' | 'blocked';
  /** The notice's work item (absent in old logs). */
  readonly workId?: string;
  readonly readyAt: string;
}

/** An entry of `needs-operator`: an unknown effect or corrupt work that only an operator settles. */
export interface NeedsOperatorEntry {
  readonly aggregate: 'work' | 'delivery';
  readonly id: string;
  readonly kind: string;
  readonly status: 'unknown' | 'corrupt';
  readonly reason: string;
  readonly since: string;
  /** What the machine allows now (e.g. `work.resolved`); empty for corrupt work. */
  readonly allowed: readonly string[];
}

/** The `last-error` document. */
export interface LastError {
  readonly aggregate: OperatorAggregate;
  readonly id: string;
  readonly error: OperatorError;
  readonly at: string;
}

/** Collections of the `operator-status` projector. */
export const OperatorStatusCollections = {
  /** id = {@link operatorItemKey} → {@link OperatorItem} */
  items: 'items',
  /** id = {@link countKey} → number of items of that aggregate, kind and status (absent when 0) */
  counts: 'counts',
  /** id = {@link operatorItemKey} → {@link RunningEntry} */
  running: 'running',
  /** id = taskId → {@link PendingCompletion} */
  pendingCompletions: 'pending-completions',
  /** id = {@link operatorItemKey} → {@link NeedsOperatorEntry} */
  needsOperator: 'needs-operator',
  /** id = {@link LAST_ERROR_ID} → {@link LastError} */
  lastError: 'last-error',
} as const;

/** The id of the one `last-error` document. */
export const LAST_ERROR_ID = 'last';

/**
 * The id of an item in `items`, `running` and `needs-operator`: `work/<workId>`, `task/<taskId>`,
 * `delivery/<deliveryId>`.
 */
export const operatorItemKey = (aggregate: OperatorAggregate, id: string): string => `${aggregate}/${id}`;

/**
 * The `counts` id: `work/<kind>/<status>`, `task/<kind>/<status>`, `delivery/<channel>/<status>`.
 * @example
 * const queued = (await reader.get<number>(OperatorStatusCollections.counts, countKey('work', 'delivery.send', 'queued'))) ?? 0;
 */
export const countKey = (aggregate: OperatorAggregate, kind: string, status: OperatorItemStatus): string =>
  `${countsPrefix(aggregate, kind)}${status}`;

/** The prefix of one aggregate's counts, or of one of its kinds. */
export const countsPrefix = (aggregate: OperatorAggregate, kind?: string): string =>
  kind === undefined ? `${aggregate}/` : `${aggregate}/${kind}/`;
