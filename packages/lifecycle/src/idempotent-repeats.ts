import type { Lifecycle } from './define-lifecycle.js';
import { transitionTable } from './transition-table.js';

/** Where repeating an idempotent event is a no-op for a decider; `condition` is set when it depends on the event's data. */
export interface IdempotentRow<S extends string = string, E extends string = string> {
  readonly event: E;
  readonly state: S;
  readonly condition?: string;
}

/**
 * The (event, state) pairs in which a decider treats the event as an idempotent repeat, read from the
 * machine (the states the event leads to) plus each repeat's `alsoIn`. For the docs.
 * @example
 * idempotentRepeats(taskLifecycle).map((r) => `${r.event} in ${r.state}`);
 * // ['task.cancelled in cancelled', 'task.cancelled in deleted', 'task.deleted in deleted', 'task.archived in archived']
 */
export function idempotentRepeats<S extends string, E extends string>(
  lifecycle: Lifecycle<S, E>,
): IdempotentRow<S, E>[] {
  const table = transitionTable(lifecycle);
  const rows: IdempotentRow<S, E>[] = [];
  for (const repeat of lifecycle.idempotent) {
    const seen = new Set<string>();
    for (const row of table) {
      if (row.event !== repeat.event || row.kind === 'stay' || seen.has(`${row.to}/${row.condition ?? ''}`)) continue;
      seen.add(`${row.to}/${row.condition ?? ''}`);
      rows.push({ event: repeat.event, state: row.to, ...(row.condition ? { condition: row.condition } : {}) });
    }
    for (const state of repeat.alsoIn ?? []) rows.push({ event: repeat.event, state });
  }
  return rows;
}
