import { type Actor, DemiurgeError, ErrorCode } from '@demiurge/contracts';
import { NotFoundError } from '@demiurge/control-plane';
import {
  type OperatorBackend,
  type OperatorCaller,
  type OperatorEvent,
  operatorEventsFrom,
  operatorSocketPath,
  serveStdio,
  serveUnixSocket,
} from '@demiurge/operator';
import { RunsCollections, runsProjector } from '@demiurge/projector-runs';
import { merge, mergeMap, type Observable } from 'rxjs';
import type { DemiurgeApp } from './app.js';
import { scheduleOverview } from './schedule-overview.js';

class NoSuchPromptError extends DemiurgeError {
  override readonly name = 'NoSuchPromptError';
  readonly code = ErrorCode.NotFound;
}

/** The operator gateway's backend over a running host: every answer comes from the store. */
export function createOperatorBackend(app: DemiurgeApp, options: { onShutdown?: () => void } = {}): OperatorBackend {
  const { runtime } = app;
  /** The principal of a request: the operator client, as its `operator.initialize` named itself. */
  const actorOf = (caller?: OperatorCaller): Actor => ({ kind: 'operator', id: caller?.client.name ?? 'operator' });
  const events$: Observable<OperatorEvent> = merge(
    app.store.events$.pipe(mergeMap((event) => operatorEventsFrom(event))),
    app.pushes$ as Observable<OperatorEvent>,
  );
  return {
    events$,
    async submit(p, caller) {
      const submitted = await app.submit({
        actor: actorOf(caller),
        text: p.text,
        ...(p.session_id ? { sessionId: p.session_id } : { newSession: true }),
        ...(p.plan !== undefined ? { plan: p.plan } : {}),
      });
      return { session_id: submitted.sessionId, run_id: submitted.runId, turn_id: submitted.turnId };
    },
    async replyPrompt(p) {
      throw new NoSuchPromptError(`no open prompt ${p.prompt_id}`);
    },
    async replyApproval(p, caller) {
      const actor = actorOf(caller);
      if (p.decision === 'grant') await runtime.approvals.grant(p.approval_id, actor, p.note);
      else await runtime.approvals.deny(p.approval_id, actor, p.note);
      return { ok: true };
    },
    async interrupt(p, caller) {
      await runtime.sessions.get(p.session_id);
      await app.interrupt(p.session_id, undefined, actorOf(caller));
      return { ok: true };
    },
    async cancel(p, caller) {
      const reason = p.reason ?? 'cancelled by the operator';
      const by = actorOf(caller);
      if (p.run_id) {
        await runtime.runs.get(p.run_id);
        await runtime.engine.cancel(p.run_id, reason, by);
      }
      if (p.task_id) {
        const task = await app.store.projection('task-board').get<{ sessionId: string }>('tasks', p.task_id);
        if (!task) throw new NotFoundError('task', p.task_id);
        await app.cancelTask({ sessionId: task.sessionId, taskId: p.task_id }, reason);
      }
      if (p.session_id) await app.interrupt(p.session_id, reason, by);
      return { ok: true };
    },
    async status(p) {
      const live = await app.liveRuns();
      const base = {
        host: { owner: app.owner, closing: app.isClosing, provider: `${app.provider.name}/${app.provider.model}` },
        work: await runtime.host.status(),
        live_runs: live.map((r) => ({ run_id: r.runId, session_id: r.sessionId, status: r.status, owner: r.owner })),
        schedules: await scheduleOverview(app.store, app.coreDir, app.clock.now()),
        open_approvals: (await runtime.approvals.listOpen()).map((a) => ({
          approval_id: a.approvalId,
          session_id: a.sessionId,
          tool: a.tool,
          status: a.status,
          expires_at: a.expiresAt,
        })),
      };
      if (!p.session_id) return base;
      const session = await runtime.sessions.get(p.session_id);
      const runs = await app.store
        .projection(runsProjector.name)
        .list<{ runId: string; status: string }>(RunsCollections.runsBySession, { prefix: `${p.session_id}/` });
      return { ...base, session, runs };
    },
    async history(p) {
      const messages = await runtime.sessions.history(p.session_id, p.limit ? { limit: p.limit } : {});
      return {
        session_id: p.session_id,
        messages: messages.map((m) => ({
          message_id: m.messageId,
          role: m.role,
          text: m.text,
          visibility: m.visibility,
          ...(m.turnId ? { turn_id: m.turnId } : {}),
        })),
      };
    },
    async shutdown() {
      setImmediate(() => options.onShutdown?.());
      return { ok: true };
    },
  };
}

/** Serves the gateway on `<home>/runtime/operator.sock` (0600 in a 0700 directory). */
export async function serveGatewaySocket(app: DemiurgeApp, options: { onShutdown?: () => void } = {}) {
  return serveUnixSocket({ path: operatorSocketPath(app.home), backend: createOperatorBackend(app, options) });
}

/** Serves the gateway over stdin/stdout (NDJSON). */
export function serveGatewayStdio(
  app: DemiurgeApp,
  streams: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream },
  options: { onShutdown?: () => void } = {},
) {
  return serveStdio({ ...streams, backend: createOperatorBackend(app, options) } as never);
}
