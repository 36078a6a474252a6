import type { ProjectionSource } from '@demiurge/event-store';
import { operatorStatusProjector } from './operator-status.projector.js';
import {
  LAST_ERROR_ID,
  type LastError,
  type NeedsOperatorEntry,
  OperatorStatusCollections,
  type PendingCompletion,
  type RunningEntry,
} from './operator-status.view.js';

/** One operator-readable view across work items, tasks and the outbox. */
export interface OperatorStatus {
  /** `work/<kind>/<status>`, `task/<kind>/<status>`, `delivery/<channel>/<status>` → count. */
  readonly counts: Record<string, number>;
  readonly running: readonly RunningEntry[];
  readonly pendingCompletions: readonly PendingCompletion[];
  readonly needsOperator: readonly NeedsOperatorEntry[];
  readonly lastError: LastError | null;
}

/** The `operator-status` read model, typed. */
export interface OperatorStatusReader {
  /** The whole view at once. */
  status(): Promise<OperatorStatus>;
}

/**
 * The typed reader of the `operator-status` projection.
 * @example
 * const { needsOperator } = await operatorStatusReader(store).status();
 */
export function operatorStatusReader(store: ProjectionSource): OperatorStatusReader {
  const reader = store.projection(operatorStatusProjector.name);
  return {
    async status() {
      const counts = await reader.entries<number>(OperatorStatusCollections.counts);
      return {
        counts: Object.fromEntries(counts.map((c) => [c.id, c.doc])),
        running: await reader.list<RunningEntry>(OperatorStatusCollections.running),
        pendingCompletions: await reader.list<PendingCompletion>(OperatorStatusCollections.pendingCompletions),
        needsOperator: await reader.list<NeedsOperatorEntry>(OperatorStatusCollections.needsOperator),
        lastError: (await reader.get<LastError>(OperatorStatusCollections.lastError, LAST_ERROR_ID)) ?? null,
      };
    },
  };
}
