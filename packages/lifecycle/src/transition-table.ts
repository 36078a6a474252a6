import type { Lifecycle } from './define-lifecycle.js';

/**
 * One edge of a lifecycle machine. `kind` is `create` for an edge out of `none`, `stay` for an
 * event that does not move the aggregate, `move` otherwise; `condition` describes the guard of a
 * transition whose target depends on the event's data.
 */
export interface TransitionRow<S extends string = string, E extends string = string> {
  readonly from: S;
  readonly event: E;
  readonly to: S;
  readonly kind: 'create' | 'move' | 'stay';
  readonly condition?: string;
}

/**
 * Every edge of a lifecycle machine, read from the machine: by state (machine order), then event
 * (vocabulary order), then guard order.
 * @example
 * transitionTable(taskLifecycle).filter((row) => row.from === 'deleted');
 * // [{ from: 'deleted', event: 'task.archived', to: 'archived', kind: 'move' }]
 */
export function transitionTable<S extends string, E extends string>(lifecycle: Lifecycle<S, E>): TransitionRow<S, E>[] {
  const rows: TransitionRow<S, E>[] = [];
  for (const from of lifecycle.states) {
    const node = lifecycle.machine.root.states[from]!;
    for (const event of lifecycle.events) {
      for (const definition of node.transitions.get(event) ?? []) {
        const to = (definition.target?.[0]?.key ?? from) as S;
        const kind = from === lifecycle.initialState ? 'create' : to === from ? 'stay' : 'move';
        rows.push({
          from,
          event,
          to,
          kind,
          ...(definition.guard !== undefined || definition.description
            ? { condition: definition.description ?? 'guarded' }
            : {}),
        });
      }
    }
  }
  return rows;
}

/**
 * The states with no outgoing transition: once there, nothing more can happen to the aggregate.
 * @example
 * finalStates(taskLifecycle); // ['archived']
 */
export function finalStates<S extends string, E extends string>(lifecycle: Lifecycle<S, E>): S[] {
  return lifecycle.states.filter((state) => lifecycle.machine.root.states[state]!.transitions.size === 0);
}
