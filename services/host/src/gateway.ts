import { type Actor, DemiurgeError, ErrorCode } from '@demiurge/contracts';
import { NotFoundError } from '@demiurge/control-plane';
import {
  type OperatorBackend,
  type OperatorCaller,
  type OperatorEvent,
  operatorEventsFrom,
  operatorSocketPath,
  type StatusResult,
  serveStdio,
  serveUnixSocket,
} from '@demiurge/operator';
import type { OperatorStatus } from '@demiurge/projector-operator-status';
import { outboxReader } from '@demiurge/projector-outbox';
import { runsReader, type SessionRunEntry } from '@demiurge/projector-runs';
import type { SessionView } from '@demiurge/projector-sessions';
import { taskBoardReader } from '@demiurge/projector-task-board';
import { merge, mergeMap, type Observable } from 'rxjs';
import type { DemiurgeApp, Submitted } from './app.js';
import { describeFailure } from './describe-failure.js';
import { mcpStatusEntries } from './mcp-status-entries.js';
import { HostOperatorSession, type SessionGatewayOptions } from './operator-session/host-operator-session.js';
import { type ScheduleOverview, scheduleOverview } from './schedule-overview.js';

class NoSuchPromptError extends DemiurgeError {
  override readonly name = 'NoSuchPromptError';
  readonly code = ErrorCode.NotFound;
}

/** Options of {@link createOperatorBackend}. */
export interface GatewayOptions {
  /** `operator.shutdown` was asked for. */
  readonly onShutdown?: () => void;
  /** A turn was admitted through `operator.submit` (the stdio gateway waits for these before it ends). */
  readonly onSubmitted?: (submitted: Submitted) => void;
  /** Settings of connections that use the original (session-bound) handshake. */
  readonly session?: SessionGatewayOptions;
  /** An original-protocol handshake was refused (the TUI gateway exits 2 after answering it). */
  readonly onRefused?: (reason: string) => void;
}

/** The operator gateway's backend over a running host: every answer comes from the store. */
/** `operator.status` of this host: the protocol's frame with the host's read models. */
export type HostStatusResult = StatusResult<
  OperatorStatus,
  { readonly schedules: readonly ScheduleOverview[]; readonly errors: readonly string[] },
  SessionView,
  SessionRunEntry
>;

export function createOperatorBackend(app: DemiurgeApp, options: GatewayOptions = {}): OperatorBackend {
  const { runtime } = app;
  /** The principal of a request: the operator client, as its `operator.initialize` named itself. */
  const actorOf = (caller?: OperatorCaller): Actor => ({ kind: 'operator', id: caller?.client.name ?? 'operator' });
  const events$: Observable<OperatorEvent> = merge(
    app.store.events$.pipe(mergeMap((event) => operatorEventsFrom(event))),
    app.pushes$ as Observable<OperatorEvent>,
  );
  return {
    events$,
    async openSession(open) {
      // `/exit` or `shutdown` of a session-bound connection ends that connection's session; the process
      // ends only where the caller says so (`session.onExit`, the TUI gateway), never a shared daemon.
      return new HostOperatorSession(app, open, options.session ?? {});
    },
    handshakeRefused(reason) {
      options.onRefused?.(reason);
    },
    async submit(p, caller) {
      const submitted = await app.submit({
        actor: actorOf(caller),
        text: p.text,
        ...(p.session_id ? { sessionId: p.session_id } : { newSession: true }),
        ...(p.plan !== undefined ? { plan: p.plan } : {}),
      });
      options.onSubmitted?.(submitted);
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
        const task = await taskBoardReader(app.store).get(p.task_id);
        if (!task) throw new NotFoundError('task', p.task_id);
        await app.cancelTask({ sessionId: task.sessionId, taskId: p.task_id }, reason);
      }
      if (p.session_id) await app.interrupt(p.session_id, reason, by);
      return { ok: true };
    },
    async status(p): Promise<HostStatusResult> {
      const live = await app.liveRuns();
      const base: HostStatusResult = {
        host: { owner: app.owner, closing: app.isClosing, provider: `${app.provider.name}/${app.provider.model}` },
        core: await app.coreSource.status(),
        work: await runtime.host.status(),
        live_runs: live.map((r) => ({ run_id: r.runId, session_id: r.sessionId, status: r.status, owner: r.owner })),
        schedules: await scheduleOverview(app.store, (await app.coreSource.current()).core.dir, app.clock.now()),
        open_approvals: (await runtime.approvals.listOpen()).map((a) => ({
          approval_id: a.approvalId,
          session_id: a.sessionId,
          run_id: a.runId,
          tool: a.tool,
          arguments: a.arguments,
          reason: a.reason,
          status: a.status,
          expires_at: a.expiresAt,
        })),
        mcp_servers: await mcpStatusEntries(app.store),
      };
      if (!p.session_id) return base;
      const session = await runtime.sessions.get(p.session_id);
      const runs = await runsReader(app.store).ofSession(p.session_id);
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
    async compact(p, caller) {
      const r = await runtime.engine.compact(p.session_id, { actor: actorOf(caller) });
      return {
        session_id: r.sessionId,
        compaction_id: r.compactionId,
        message_count: r.messageCount,
        through_message_id: r.throughMessageId,
        summary: r.summary,
        tokens: r.tokens,
      };
    },
    async shutdown() {
      setImmediate(() => options.onShutdown?.());
      return { ok: true };
    },
  };
}

/** Serves the gateway on `<home>/runtime/operator.sock` (0600 in a 0700 directory). */
export async function serveGatewaySocket(app: DemiurgeApp, options: GatewayOptions = {}) {
  return serveUnixSocket({
    path: operatorSocketPath(app.home),
    backend: createOperatorBackend(app, options),
    onError: gatewayErrors(app),
  });
}

/**
 * Serves the gateway over stdin/stdout (NDJSON). At the end of input every request read is answered, and
 * each turn submitted on it runs to its end with its operator deliveries sent (their events reach stdout)
 * before the server closes: `printf '…submit…' | demiurge gateway --stdio` gets its answer.
 */
export function serveGatewayStdio(
  app: DemiurgeApp,
  streams: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream },
  options: GatewayOptions = {},
) {
  const submitted: Submitted[] = [];
  const backend = createOperatorBackend(app, { ...options, onSubmitted: (s) => submitted.push(s) });
  const afterInput = async () => {
    for (let seen = 0; seen < submitted.length; seen = submitted.length) {
      await Promise.allSettled(submitted.map((s) => s.outcome));
    }
    await operatorDeliveriesSettled(app, new Set(submitted.map((s) => s.sessionId)));
  };
  return serveStdio({ ...streams, backend, afterInput, onError: gatewayErrors(app) } as never);
}

/** What the gateway cannot answer a client with (an internal error, a broken connection) goes to the host's logger. */
const gatewayErrors = (app: DemiurgeApp) => (error: unknown) =>
  app.logger.error(describeFailure({ name: 'operator gateway', error }));

const IN_FLIGHT_DELIVERY = new Set(['queued', 'sending']);

/** Waits until no operator delivery of `sessions` is queued or sending (the dispatch loop sends them). */
async function operatorDeliveriesSettled(app: DemiurgeApp, sessions: ReadonlySet<string>): Promise<void> {
  const reader = outboxReader(app.store);
  for (;;) {
    let pending = false;
    for (const sessionId of sessions) {
      const entries = await reader.ofSession(sessionId);
      for (const entry of entries) {
        if (!IN_FLIGHT_DELIVERY.has(entry.status)) continue;
        const view = await reader.get(entry.deliveryId);
        if (view?.channel === 'operator') pending = true;
      }
    }
    if (!pending || app.isClosing) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
