import type { TaskView } from '@demiurge/projector-task-board';
import { runAllowed } from './actions.js';
import { actionButton, actionForm, esc, table } from './html.js';
import { lifecycleLink } from './lifecycle-section.js';
import type { DashboardReads } from './read-models.js';

type Awaited2<F extends (...a: never[]) => Promise<unknown>> = Awaited<ReturnType<F>>;
const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
const code = (v: unknown) => `<code>${esc(v)}</code>`;
const link = (href: string, text: string) => `<a href="${esc(href)}">${esc(text)}</a>`;

/** Operator status: what needs an operator first (unknown sends, approvals, blocked tasks, last error). */
export function statusSection(s: Awaited2<DashboardReads['status']>, blocked: readonly TaskView[]): string {
  const approvals = table(
    s.open_approvals,
    [
      ['approval', (a) => code(a.approval_id)],
      ['session', (a) => link(`/sessions/${a.session_id}`, a.session_id)],
      ['tool', (a) => esc(a.tool)],
      ['arguments', (a) => `<pre>${esc(JSON.stringify(a.arguments))}</pre>`],
      ['reason', (a) => esc(a.reason)],
      [
        'decide',
        (a) =>
          `${actionButton('Grant', `/api/approvals/${a.approval_id}/grant`)} ${actionButton('Deny', `/api/approvals/${a.approval_id}/deny`)}`,
      ],
    ],
    'no open approvals',
  );
  const needs = table(
    s.work.needsOperator,
    [
      ['aggregate', (n) => esc(n.aggregate)],
      ['id', (n) => code(n.id)],
      ['status', (n) => esc(n.status)],
      ['reason', (n) => esc(n.reason)],
      ['since', (n) => esc(n.since)],
      ['resolve', (n) => (n.aggregate === 'work' && n.allowed.includes('work.resolved') ? resolveButtons(n.id) : '')],
    ],
    'nothing unknown or corrupt',
  );
  const blockedTable = table(
    blocked,
    [
      ['task', (t) => code(t.taskId)],
      ['title', (t) => esc(t.title)],
      ['reason', (t) => esc(t.blocked?.reason)],
    ],
    'no blocked tasks',
  );
  const live = table(
    s.live_runs,
    [
      ['run', (r) => code(r.run_id)],
      ['session', (r) => link(`/sessions/${r.session_id}`, r.session_id)],
      ['status', (r) => esc(r.status)],
      ['owner', (r) => esc(r.owner)],
    ],
    'no live runs',
  );
  const last = s.work.lastError
    ? `<p class="error">${esc(s.work.lastError.aggregate)} ${code(s.work.lastError.id)}: ${esc(s.work.lastError.error.code)}: ${esc(s.work.lastError.error.message)} (${esc(s.work.lastError.at)})</p>`
    : '<p class="empty">no error</p>';
  const schedules = table(
    s.schedules.schedules,
    [
      ['schedule', (x) => code(x.scheduleId)],
      ['cron', (x) => `${code(x.cron)} ${esc(x.timezone)}${x.enabled ? '' : ' (disabled)'}`],
      ['next fires', (x) => esc(x.upcoming.map((u) => u.local).join(', '))],
      ['past fires', (x) => esc(x.past.map((p) => `${p.dueAt} ${p.status}`).join(', '))],
    ],
    'no schedules',
  );
  const scheduleErrors = s.schedules.errors.map((e) => `<p class="error">${esc(e)}</p>`).join('');
  const core = s.core
    ? ` · core ${code(s.core.id)} ${s.core.revision ? `revision #${esc(s.core.number)} ${code(s.core.revision.slice(0, 12))}` : 'unversioned (its working copy runs)'}`
    : '';
  const mcp = s.mcp_servers?.length
    ? `<h2>MCP servers</h2>${table(
        s.mcp_servers,
        [
          ['server', (m) => code(m.server)],
          ['state', (m) => esc(m.state)],
          ['target', (m) => `${esc(m.transport)} ${code(m.target)}`],
          ['tools', (m) => esc(m.tools)],
          ['crashes', (m) => esc(m.crashes)],
          ['last', (m) => esc(m.last_reason ?? '')],
        ],
        'no MCP servers',
      )}`
    : '';
  return `<p>host ${code(s.host.owner)} · provider ${esc(s.host.provider)}${core} · head ${esc(s.head)}${s.host.closing ? ' · closing' : ''}</p>
<h2>Open approvals</h2>${approvals}<h2>Unknown sends and corrupt work</h2>${needs}<h2>Blocked tasks</h2>${blockedTable}
<h2>Last error</h2>${last}<h2>Live runs</h2>${live}<h2>Schedules</h2>${schedules}${scheduleErrors}${mcp}`;
}

/** An interrupted send's outcome is unknown: each decision says what it means before it is recorded. */
function resolveButtons(workId: string): string {
  const path = `/api/work/${workId}/resolve`;
  return [
    actionButton('It was sent', path, 'Record that the message WAS delivered? It will not be sent again.', {
      decision: 'sent',
    }),
    actionButton('It failed', path, 'Record that the send FAILED? It will not be retried.', { decision: 'failed' }),
    actionButton('Send again', path, 'Send it again? The recipient may get it twice.', { decision: 'retry' }),
  ].join(' ');
}

const LANES = ['active', 'waiting', 'blocked', 'done'] as const;

function taskCard(t: TaskView): string {
  const tail = t.logTail.map((l) => `${l.stream}: ${l.text}`).join('\n');
  const action = (event: string, label: string, path: string, confirm?: string) =>
    t.allowed.includes(event as never) ? actionButton(label, `/api/tasks/${t.taskId}/${path}`, confirm) : '';
  const cancel = [
    action('task.cancelled', 'Cancel', 'cancel', `Cancel task ${t.taskId}?`),
    action(
      'task.deleted',
      'Delete',
      'delete',
      `Delete task ${t.taskId}? It is hidden from every list (kept for audit).`,
    ),
    action('task.archived', 'Archive', 'archive'),
  ].join(' ');
  const artifacts = t.artifacts.map((a) => `<li>${esc(a.name)}: ${esc(a.path)} (${esc(a.bytes)} bytes)</li>`).join('');
  return `<div class="card" data-task-id="${esc(t.taskId)}" data-status="${esc(t.status)}">
<b>${esc(t.title)}</b> ${code(t.taskId)}<br>${esc(t.kind)} · ${esc(t.status)} (${lifecycleLink('task', t.status)}) · session ${link(`/sessions/${t.sessionId}`, t.sessionId)}
${tail ? `<pre>${esc(tail)}</pre>` : ''}${artifacts ? `<ul>${artifacts}</ul>` : ''}${cancel}</div>`;
}

/** The task board: one column per lane, each task with its log tail, artifacts and allowed actions. */
export function tasksSection(tasks: readonly TaskView[]): string {
  const lanes = LANES.map((lane) => {
    const cards = tasks.filter((t) => t.lane === lane).map(taskCard);
    return `<div class="lane" data-lane="${lane}"><h2>${lane} (${cards.length})</h2>${cards.join('')}</div>`;
  });
  return `<div class="lanes">${lanes.join('')}</div>`;
}

export function sessionsSection(sessions: Awaited2<DashboardReads['sessions']>): string {
  return table(
    sessions,
    [
      ['session', (s) => link(`/sessions/${s.sessionId}`, s.sessionId)],
      ['title', (s) => esc(s.title)],
      ['status', (s) => esc(s.status)],
      ['mode', (s) => esc(s.mode)],
      ['turns', (s) => esc(s.turnCount)],
      ['last message', (s) => esc(s.lastMessage ? `${s.lastMessage.role}: ${s.lastMessage.text}` : '')],
    ],
    'no sessions',
  );
}

/** One session: its transcript, turns and runs. */
export function sessionSection(d: Awaited2<DashboardReads['session']>): string {
  const transcript = d.messages
    .map(
      (m) =>
        `<div class="card message" data-role="${esc(m.role)}"><b>${esc(m.role)}</b>${m.turn_id ? ` ${code(m.turn_id)}` : ''}<pre>${esc(m.text)}</pre></div>`,
    )
    .join('');
  const turns = table(d.turns, [
    ['turn', (t) => code(t.turnId)],
    ['status', (t) => esc(t.status)],
    ['steps', (t) => esc(t.steps)],
    ['started', (t) => esc(t.startedAt)],
    ['error', (t) => esc(t.error ? `${t.error.code}: ${t.error.message}` : '')],
  ]);
  const runs = table(d.runs, [
    ['run', (r) => code(r.runId)],
    ['status', (r) => esc(r.status)],
  ]);
  const submit =
    d.session.status === 'active' ? actionForm(`/api/sessions/${d.session.sessionId}/messages`, 'text', 'Send') : '';
  const toolCalls = table(
    d.toolCalls,
    [
      ['tool call', (t) => code(t.toolCallId)],
      ['turn', (t) => code(t.turnId)],
      ['tool', (t) => esc(t.tool)],
      ['arguments', (t) => `<pre>${esc(clip(JSON.stringify(t.arguments), 200))}</pre>`],
      ['status', (t) => `${esc(t.status)} (${lifecycleLink('tool_call', t.status)})`],
      ['result', (t) => `<pre>${esc(clip(t.output ?? t.denial?.reason ?? t.error?.message ?? '', 200))}</pre>`],
    ],
    'no tool calls',
  );
  return `<p>${esc(d.session.title)} · ${esc(d.session.status)}</p>${submit}<h2>Transcript</h2><div class="transcript">${transcript || '<p class="empty">no messages</p>'}</div>
<h2>Turns</h2>${turns}<h2>Tool calls</h2>${toolCalls}<h2>Runs</h2>${runs}`;
}

function runButtons(runId: string, status: string): string {
  const allowed = runAllowed(status);
  const button = (event: string, label: string, path: string, confirm?: string) =>
    allowed.includes(event as never) ? actionButton(label, `/api/runs/${runId}/${path}`, confirm) : '';
  return [
    button('run.cancel_requested', 'Cancel', 'cancel', `Cancel run ${runId}?`),
    button('run.paused', 'Pause', 'pause'),
    button('run.resumed', 'Resume', 'resume'),
  ].join(' ');
}

export function runsSection(runs: Awaited2<DashboardReads['runs']>): string {
  return table(
    runs,
    [
      ['run', (r) => code(r.runId)],
      ['session', (r) => link(`/sessions/${r.sessionId}`, r.sessionId)],
      ['status', (r) => `${esc(r.status)} (${lifecycleLink('run', r.status)})`],
      ['stage', (r) => esc(r.stage)],
      ['owner', (r) => esc(r.owner)],
      ['lease until', (r) => esc(r.leaseUntil)],
      ['turns', (r) => esc(r.turnIds.length)],
      ['actions', (r) => runButtons(r.runId, r.status)],
    ],
    'no runs',
  );
}

export function workSection(d: Awaited2<DashboardReads['work']>): string {
  const work = table(
    d.work,
    [
      ['work', (w) => code(w.workId)],
      ['kind', (w) => esc(w.kind)],
      ['subject', (w) => code(w.subjectId)],
      ['status', (w) => esc(w.status)],
      ['attempts', (w) => esc(w.attempts)],
      ['owner', (w) => esc(w.owner)],
      ['due', (w) => esc(w.dueAt)],
    ],
    'no work items',
  );
  const outbox = table(
    d.outbox,
    [
      ['delivery', (o) => code(o.deliveryId)],
      ['status', (o) => esc(o.status)],
    ],
    'no deliveries',
  );
  return `<h2>Work items</h2>${work}<h2>Outbox</h2>${outbox}`;
}

export function eventsSection(d: Awaited2<DashboardReads['events']>): string {
  return `<p>head ${esc(d.head)}</p>${table(
    [...d.events].reverse(),
    [
      ['#', (e) => esc(e.position)],
      ['type', (e) => code(e.type)],
      ['stream', (e) => code(e.streamId)],
      ['at', (e) => esc(e.recordedAt)],
      ['trace', (e) => traceCell(e.meta)],
      ['data', (e) => `<pre>${esc(clip(JSON.stringify(e.data), 300))}</pre>`],
    ],
    'no events',
  )}`;
}

/** The trace id an event's meta records (a host with OpenTelemetry on), or nothing. */
function traceCell(meta: object): string {
  const { traceId } = meta as { traceId?: unknown };
  return typeof traceId === 'string' ? `<code class="trace" title="OpenTelemetry trace id">${esc(traceId)}</code>` : '';
}
