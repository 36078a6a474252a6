import type { Lifecycle } from './define-lifecycle.js';
import { finalStates, transitionTable } from './transition-table.js';

/**
 * A Mermaid `stateDiagram-v2` of a lifecycle machine: `[*]` is `none`, every moving edge is drawn
 * with its event (and guard condition), and final states lead to `[*]`. Events that do not move the
 * aggregate are left to the transition table.
 * @example
 * const markdown = ['```mermaid', mermaidDiagram(taskLifecycle), '```'].join('\n');
 */
export function mermaidDiagram(lifecycle: Lifecycle): string {
  const name = (state: string) => (state === lifecycle.initialState ? '[*]' : state);
  const lines = ['stateDiagram-v2'];
  for (const row of transitionTable(lifecycle)) {
    if (row.kind === 'stay') continue;
    const label = row.condition ? `${row.event} (${row.condition})` : row.event;
    lines.push(`  ${name(row.from)} --> ${name(row.to)}: ${label}`);
  }
  for (const state of finalStates(lifecycle)) lines.push(`  ${state} --> [*]`);
  return lines.join('\n');
}
