import { type Lifecycle, lifecycles, transitionTable } from '@demiurge/lifecycle';
import { esc } from './html.js';
import { lifecycleDiagram } from './lifecycle-diagram.js';

/** The link to an aggregate's lifecycle page with `state` highlighted. */
export const lifecycleLink = (streamType: string, state: string) =>
  `<a class="lifecycle" href="/lifecycle/${esc(streamType)}?state=${esc(state)}">lifecycle</a>`;

/** Every lifecycle, linked. */
export function lifecycleIndex(): string {
  const items = lifecycles.map(
    (l) => `<li><a href="/lifecycle/${esc(l.streamType)}">${esc(l.title)}</a>: ${esc(l.summary)}</li>`,
  );
  return `<ul>${items.join('')}</ul>`;
}

/**
 * An aggregate's lifecycle, read from its machine: its diagram ({@link lifecycleDiagram}, drawn from the machine
 * with `current` highlighted), then each state with its outgoing transitions (the same table docs/lifecycle.md is
 * generated from), the row of `current` highlighted with what the machine allows from it.
 */
export function lifecycleSection(lifecycle: Lifecycle, current: string): string {
  const rows = transitionTable(lifecycle);
  const body = lifecycle.states
    .map((state) => {
      const out = rows
        .filter((r) => r.from === state)
        .map((r) => `<code>${esc(r.event)}</code> → <b>${esc(r.to)}</b>${r.condition ? ` (${esc(r.condition)})` : ''}`);
      const mark = state === current ? ' class="current" data-current="true"' : '';
      return `<tr${mark}><td>${state === current ? '▶ ' : ''}<b>${esc(state)}</b></td><td>${out.join('<br>') || '<span class="empty">final</span>'}</td></tr>`;
    })
    .join('');
  const unknown =
    current && !lifecycle.states.includes(current)
      ? `<p class="error">"${esc(current)}" is not a state of the ${esc(lifecycle.aggregate)} machine</p>`
      : '';
  return `<p>${esc(lifecycle.summary)}</p>${unknown}<div class="diagram">${lifecycleDiagram(lifecycle, current)}</div><h2>Transitions</h2><table><thead><tr><th>state</th><th>transitions (event → state)</th></tr></thead><tbody>${body}</tbody></table>`;
}
