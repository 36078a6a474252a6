import type { Lifecycle } from './define-lifecycle.js';
import { idempotentRepeats } from './idempotent-repeats.js';
import { lifecycles as allLifecycles } from './lifecycles.js';
import { mermaidDiagram } from './mermaid.js';
import { transitionTable } from './transition-table.js';
import { allowedEvents } from './transitions.js';

/** The seed invariants that span aggregates, in words. */
const SEED_INVARIANTS = [
  'Lifecycle state is durable, not UI-only: every transition is an event in the log, checked by the machine below before it is appended.',
  'The UI cannot invent a transition: the machines are the only transition tables; the operator view offers `allowedEvents(lifecycle, state)` and command handlers use `assertTransition` or a decider.',
  'Cancelled tasks leave the active board: `cancelled` never returns to `active` (only `deleted` or `archived` follow).',
  'Resume never resurrects a deleted task: nothing leaves `deleted` except `task.archived`.',
  'Cancel, delete and archive are explicit transitions and idempotent: a decider turns a repeat into a no-op (nothing appended), while the machine refuses the duplicate, so `verifyLog` flags one found in the log.',
  'An expired `sending` becomes `unknown` and is never re-sent automatically; only an operator or reconciler resolves it (work items, deliveries, tool calls).',
  'Terminal runs must not leave non-resumable active tasks, and a stale claim token cannot change anything: both span more than one stream, so the runtimes enforce them (a cancelled run ends only after cancelling its tasks, and no task is left blocked without a way to resume; detached tasks of a completed or failed run keep running and report through their completion notices; every claimed write carries and checks its claim token); the machines guarantee the per-aggregate half (a terminal run never runs again, a claim happens only from `queued` or `retry_scheduled`).',
];

const code = (text: string) => `\`${text}\``;

function renderLifecycle(lifecycle: Lifecycle): string[] {
  const rows = transitionTable(lifecycle);
  const lines = [
    `## ${lifecycle.title}`,
    '',
    lifecycle.summary,
    '',
    `Stream type ${code(lifecycle.streamType)}; created by ${lifecycle.creationEvents.map(code).join(', ')}.`,
    '',
    '### Invariants',
    '',
    ...lifecycle.invariants.map((invariant) => `- ${invariant}`),
    '',
    '### Diagram',
    '',
    '```mermaid',
    mermaidDiagram(lifecycle),
    '```',
    '',
    '### States',
    '',
    '| state | meaning | allowed events |',
    '| --- | --- | --- |',
  ];
  for (const state of lifecycle.states) {
    const meaning = lifecycle.machine.root.states[state]?.description ?? '';
    const allowed = allowedEvents(lifecycle, state);
    lines.push(`| ${code(state)} | ${meaning} | ${allowed.length ? allowed.map(code).join(', ') : '(final)'} |`);
  }
  lines.push('', '### Transitions', '', '| from | event | to | condition |', '| --- | --- | --- | --- |');
  for (const row of rows) {
    const to = row.kind === 'stay' ? `${code(row.to)} (stays)` : code(row.to);
    lines.push(`| ${code(row.from)} | ${code(row.event)} | ${to} | ${row.condition ?? ''} |`);
  }
  const repeats = idempotentRepeats(lifecycle);
  if (repeats.length > 0) {
    lines.push(
      '',
      '### Idempotent repeats',
      '',
      'A decider appends nothing for these; the machine itself refuses them, so one found in the log is a violation.',
      '',
      '| event | no-op in | when |',
      '| --- | --- | --- |',
    );
    for (const repeat of repeats) {
      lines.push(`| ${code(repeat.event)} | ${code(repeat.state)} | ${repeat.condition ?? ''} |`);
    }
  }
  lines.push('');
  return lines;
}

/**
 * `docs/lifecycle.md` as Markdown, generated from the machines: the seed invariants, then per
 * aggregate its invariants, a Mermaid diagram, its states, its transition table and its idempotent
 * repeats. A test fails when the committed file is stale; `pnpm run docs:generate` rewrites it.
 * @example
 * writeFileSync('docs/lifecycle.md', renderLifecycleDoc());
 */
export function renderLifecycleDoc(lifecycles: readonly Lifecycle[] = allLifecycles): string {
  const lines = [
    '# Lifecycles',
    '',
    '<!-- Generated from the XState machines in @demiurge/lifecycle by `pnpm run docs:generate`. Do not edit by hand. -->',
    '',
    'Each aggregate has one XState machine in `@demiurge/lifecycle`; it is the only transition table of that',
    'aggregate. Command handlers check events with it before appending, `verifyLog` (`demiurge verify`) replays',
    'the log through it, the operator view offers what it allows, and this page is generated from it.',
    '',
    'How to read the tables: event names are the domain event types (see [events.md](events.md)). `none` is the',
    'state of a stream before its first event, so creating an aggregate is a checked transition too, and a',
    'creation event on an existing stream is refused. "(stays)" marks an event that is recorded without moving',
    "the aggregate. A condition is a guard on the event's data (for example `work.failed` with or without",
    '`retryAt`).',
    '',
    '## Seed invariants',
    '',
    ...SEED_INVARIANTS.map((invariant) => `- ${invariant}`),
    '',
    '## Aggregates',
    '',
    '| aggregate | stream type | states |',
    '| --- | --- | --- |',
    ...lifecycles.map(
      (l) =>
        `| [${l.title}](#${l.title
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .replace(/ /g, '-')}) | ${code(l.streamType)} | ${l.states
          .filter((s) => s !== l.initialState)
          .map(code)
          .join(', ')} |`,
    ),
    '',
  ];
  for (const lifecycle of lifecycles) lines.push(...renderLifecycle(lifecycle));
  return lines.join('\n');
}
