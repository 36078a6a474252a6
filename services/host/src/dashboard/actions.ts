import { allowedEvents, runLifecycle } from '@demiurge/lifecycle';
import { CancelParams, type OperatorBackend, type OperatorCaller, ReplyApprovalParams } from '@demiurge/operator';
import { runsReader } from '@demiurge/projector-runs';
import { taskBoardReader } from '@demiurge/projector-task-board';
import { workItemsReader } from '@demiurge/projector-work-items';
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import type { DemiurgeApp } from '../app.js';
import { resolveWork } from '../runtime/admin-runtime.js';
import { DashboardHttpError } from './http-errors.js';

const CALLER: OperatorCaller = { client: { name: 'dashboard', version: '1' } };
const BY = '(dashboard)';

/** What a run's machine allows from `status` (the dashboard offers only these). */
export const runAllowed = (status: string) => allowedEvents(runLifecycle, status as never);

function refuse(aggregate: string, id: string, status: string, action: string, allowed: readonly string[]): never {
  throw new DashboardHttpError(
    409,
    'illegal_transition',
    `${aggregate} ${id} is ${status}: it cannot be ${action} (the ${aggregate} machine allows ${allowed.join(', ') || 'nothing'})`,
  );
}

const Reason = z.strictObject({ reason: z.string().min(1).optional() });
const Note = z.strictObject({ note: z.string().min(1).optional() });
const Resolve = z.strictObject({ decision: z.enum(['sent', 'failed', 'retry']), note: z.string().min(1).optional() });
const Submit = z.strictObject({ text: z.string().min(1) });

/**
 * The dashboard's actions: the gateway's commands (cancel, approvals, submit) and the CLI's (task delete and
 * archive, run pause and resume, work resolve), each refused with 409 unless the machine allows it now.
 */
export function registerActions(web: Hono, app: DemiurgeApp, backend: OperatorBackend): void {
  const { runtime, store } = app;
  const task = async (id: string) => {
    const found = await taskBoardReader(store).get(CancelParams.parse({ task_id: id }).task_id!);
    if (!found) throw new DashboardHttpError(404, 'not_found', `no task ${id}`);
    return found;
  };
  const run = async (id: string) => {
    const found = await runsReader(store).get(CancelParams.parse({ run_id: id }).run_id!);
    if (!found) throw new DashboardHttpError(404, 'not_found', `no run ${id}`);
    return { ...found, allowed: runAllowed(found.status) };
  };

  web.post('/api/tasks/:id/cancel', async (c) => {
    const { reason } = Reason.parse(await jsonBody(c));
    const t = await task(c.req.param('id'));
    if (t.status === 'cancelled') return c.json({ ok: true }); // idempotent: a no-op
    if (!t.allowed.includes('task.cancelled')) refuse('task', t.taskId, t.status, 'cancelled', t.allowed);
    const params = CancelParams.parse({ task_id: t.taskId, reason: reason ?? `cancelled by the operator ${BY}` });
    return c.json(await backend.cancel(params, CALLER));
  });
  web.post('/api/tasks/:id/delete', async (c) => {
    const { reason } = Reason.parse(await jsonBody(c));
    const t = await task(c.req.param('id'));
    if (t.status === 'deleted') return c.json({ ok: true });
    if (!t.allowed.includes('task.deleted')) refuse('task', t.taskId, t.status, 'deleted', t.allowed);
    await runtime.controlPlane.deleteTask({ sessionId: t.sessionId, taskId: t.taskId }, reason);
    return c.json({ ok: true });
  });
  web.post('/api/tasks/:id/archive', async (c) => {
    Reason.parse(await jsonBody(c));
    const t = await task(c.req.param('id'));
    if (t.status === 'archived') return c.json({ ok: true });
    if (!t.allowed.includes('task.archived')) refuse('task', t.taskId, t.status, 'archived', t.allowed);
    await runtime.controlPlane.archiveTask({ sessionId: t.sessionId, taskId: t.taskId });
    return c.json({ ok: true });
  });

  web.post('/api/runs/:id/cancel', async (c) => {
    const { reason } = Reason.parse(await jsonBody(c));
    const r = await run(c.req.param('id'));
    if (!r.allowed.includes('run.cancel_requested')) refuse('run', r.runId, r.status, 'cancelled', r.allowed);
    const params = CancelParams.parse({ run_id: r.runId, reason: reason ?? `cancelled by the operator ${BY}` });
    return c.json(await backend.cancel(params, CALLER));
  });
  web.post('/api/runs/:id/pause', async (c) => {
    const { reason } = Reason.parse(await jsonBody(c));
    const r = await run(c.req.param('id'));
    if (!r.allowed.includes('run.paused')) refuse('run', r.runId, r.status, 'paused', r.allowed);
    await runtime.runs.pause(r.runId, reason ?? `paused by the operator ${BY}`);
    return c.json({ ok: true });
  });
  web.post('/api/runs/:id/resume', async (c) => {
    Reason.parse(await jsonBody(c));
    const r = await run(c.req.param('id'));
    if (!r.allowed.includes('run.resumed')) refuse('run', r.runId, r.status, 'resumed', r.allowed);
    await runtime.runs.resume(r.runId);
    return c.json({ ok: true });
  });

  for (const decision of ['grant', 'deny'] as const) {
    web.post(`/api/approvals/:id/${decision}`, async (c) => {
      const { note } = Note.parse(await jsonBody(c));
      const params = ReplyApprovalParams.parse({ approval_id: c.req.param('id'), decision, note });
      return c.json(await backend.replyApproval(params, CALLER));
    });
  }

  web.post('/api/work/:id/resolve', async (c) => {
    const { decision, note } = Resolve.parse(await jsonBody(c));
    const id = c.req.param('id');
    const w = await workItemsReader(store).get(id);
    if (!w) throw new DashboardHttpError(404, 'not_found', `no work item ${id}`);
    if (!w.allowed.includes('work.resolved')) refuse('work item', w.workId, w.status, 'resolved', w.allowed);
    // A delivery's send is resolved with its delivery (one commit): the outbox says so at once.
    await resolveWork(store, runtime.work, w.workId, decision, note ? { note } : {});
    return c.json({ ok: true });
  });

  web.post('/api/sessions/:id/messages', async (c) => {
    const { text } = Submit.parse(await jsonBody(c));
    return c.json(await backend.submit({ text, session_id: c.req.param('id') } as never, CALLER));
  });
}

/** The request's JSON object (an empty body is `{}`), checked by the caller's schema. */
async function jsonBody(c: Context): Promise<object> {
  const text = await c.req.text();
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value;
  } catch {}
  throw new DashboardHttpError(400, 'bad_request', 'the request body is not a JSON object');
}
