import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { DemiurgeError, ErrorCode, isEvent, type RecordedEvent } from '@demiurge/contracts';
import { type ConfigOverrides, DemiurgeApp } from '@demiurge/host';
import {
  connectOperator,
  type OperatorClient,
  OperatorConnectionClosedError,
  type OperatorEvent,
  operatorSocketPath,
} from '@demiurge/operator';
import { CLI_OWNER } from '../runtime.js';

/** One answered input. */
export interface Reply {
  readonly sessionId: string;
  readonly runId: string;
  readonly turnId: string;
  readonly status: string;
  readonly text: string;
  readonly error?: { code: string; message: string };
}

/** A call of the client's run that waits for an operator's decision. */
export interface PendingApproval {
  readonly approvalId: string;
  readonly sessionId: string;
  readonly runId: string;
  readonly tool: string | null;
  readonly arguments: unknown;
  readonly reason: string;
}

export interface SendOptions {
  readonly sessionId?: string;
  readonly plan?: boolean;
  /** Called when the run waits for an approval (a plan-mode write, a shell command...). */
  readonly onApproval?: (approval: PendingApproval) => void;
}

/** A detached task that closing the in-process host cancelled or left queued. */
export interface LeftTask {
  readonly taskId: string;
  readonly kind: string;
  readonly title: string;
}

/** What closing a client left behind. */
export interface ClosedHost {
  readonly cancelledTasks: readonly LeftTask[];
  readonly queuedTasks: readonly LeftTask[];
}

/** Where `run` and `chat` send inputs: a serving host's gateway, or a host in this process. */
export interface TurnClient {
  readonly via: 'gateway' | 'in-process';
  send(text: string, options: SendOptions): Promise<Reply>;
  /** Grants or denies an approval (as the operator of this client). */
  decide(approvalId: string, decision: 'grant' | 'deny'): Promise<void>;
  /** Waits for the session's detached tasks to end (in-process only; a serving host keeps them). */
  waitForTasks(sessionId: string): Promise<void>;
  /**
   * Closes; in-process, says which detached tasks the host's close cancelled (they were running here) and
   * which it left queued (submitted, not started: the next host to start on the home runs them).
   */
  close(): Promise<ClosedHost>;
}

/**
 * The host serving the home stopped (killed, crashed, shut down) while this client waited on it. Its runs
 * are not lost: the next host to start on the home (`serve`, or a `run`/`chat` hosting in-process)
 * resumes them.
 */
export class ServingHostGoneError extends DemiurgeError {
  override readonly name = 'ServingHostGoneError';
  readonly code = ErrorCode.Closing;
  constructor(
    readonly home: string,
    readonly runId: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(
      runId
        ? `the host serving ${home} stopped during run ${runId}; the next host to start on this home resumes it (demiurge serve, or run again)`
        : `the host serving ${home} stopped before it answered; the input may have been admitted: see "demiurge runs list --live --home ${home}"`,
      options,
    );
  }
}

/** Connects to the host serving `home`, or starts one in this process (closed by the close contract). */
export async function openTurnClient(home: string, overrides: ConfigOverrides): Promise<TurnClient> {
  const socket = operatorSocketPath(home);
  if (existsSync(socket)) {
    // A socket nobody accepts on was left by a host that died: host in this process instead.
    const client = await connectOperator(socket).catch(() => undefined);
    if (client) return gatewayClient(client, home);
  }
  // One-shot hosting: no completion turns (notices wait for `serve`, or join this session's next input).
  return inProcessClient(await DemiurgeApp.start({ home, overrides, completionTurns: false }));
}

interface ApprovalOpened {
  approval_id: string;
  session_id: string;
  run_id?: string;
  tool?: string;
  arguments?: unknown;
  reason: string;
}

function gatewayClient(client: OperatorClient, home: string): TurnClient {
  let initialized: Promise<unknown> | undefined;
  const gone = (runId: string | undefined, cause?: unknown) => new ServingHostGoneError(home, runId, { cause });
  /** Rejects when the connection ends (the host died or shut down) before `promise` settles. */
  const orGone = <T>(promise: Promise<T>, runId: () => string | undefined): Promise<T> =>
    Promise.race([
      promise.catch((err: unknown) => {
        throw err instanceof OperatorConnectionClosedError ? gone(runId(), err) : err;
      }),
      client.closed.then(() => {
        throw gone(runId());
      }),
    ]);
  return {
    via: 'gateway',
    async send(text, options) {
      initialized ??= client.request('operator.initialize', {
        protocol_version: 1,
        client: { name: 'demiurge-cli', version: '0.1.0' },
      });
      await orGone(initialized, () => undefined);
      let ids: { turnId: string; runId: string } | undefined;
      const seen: OperatorEvent[] = [];
      let ended!: (e: OperatorEvent) => void;
      const turnEnded = new Promise<OperatorEvent>((resolve) => {
        ended = resolve;
      });
      const consider = (e: OperatorEvent) => {
        if (!ids) return;
        const p = e.payload as { turn_id?: string; subject?: string; run_id?: string };
        if (e.event === 'operator.status' && p.subject === 'turn' && p.turn_id === ids.turnId) ended(e);
        if (e.event === 'operator.approval.opened' && p.run_id === ids.runId) {
          const a = e.payload as unknown as ApprovalOpened;
          options.onApproval?.({
            approvalId: a.approval_id,
            sessionId: a.session_id,
            runId: ids.runId,
            tool: a.tool ?? null,
            arguments: a.arguments ?? null,
            reason: a.reason,
          });
        }
      };
      const sub = client.events$.subscribe({
        next: (e) => (ids ? consider(e) : seen.push(e)),
        error: () => undefined,
      });
      try {
        const result = await orGone(
          client.request('operator.submit', {
            text,
            ...(options.sessionId ? { session_id: options.sessionId } : {}),
            ...(options.plan !== undefined ? { plan: options.plan } : {}),
          }),
          () => undefined,
        );
        ids = { turnId: result.turn_id, runId: result.run_id };
        for (const e of seen.splice(0)) consider(e);
        const status = (await orGone(turnEnded, () => ids?.runId)).payload as {
          state: string;
          error?: { code: string; message: string };
        };
        const history = await orGone(
          client.request('operator.history', { session_id: result.session_id }),
          () => ids?.runId,
        );
        const answer = history.messages.filter((m) => m.turn_id === result.turn_id && m.role === 'assistant').at(-1);
        return {
          sessionId: result.session_id,
          runId: result.run_id,
          turnId: result.turn_id,
          status: status.state,
          text: answer?.text ?? status.error?.message ?? '',
          ...(status.error ? { error: status.error } : {}),
        };
      } finally {
        sub.unsubscribe();
      }
    },
    async decide(approvalId, decision) {
      await orGone(client.request('operator.reply_approval', { approval_id: approvalId, decision }), () => undefined);
    },
    async waitForTasks() {},
    async close() {
      await client.close();
      return { cancelledTasks: [], queuedTasks: [] };
    },
  };
}

const left = (t: { taskId: string; kind: string; title: string }): LeftTask => ({
  taskId: t.taskId,
  kind: t.kind,
  title: t.title,
});

/** The person at this CLI: the principal of the runs `run` and `chat` start in this process. */
export function cliUser(): { kind: 'user'; id: string } {
  let login: string;
  try {
    login = userInfo().username;
  } catch {
    login = process.env.USER ?? String(process.getuid?.() ?? 'unknown');
  }
  return { kind: 'user', id: `cli:${login}` };
}

function inProcessClient(app: DemiurgeApp): TurnClient {
  const actor = { kind: 'operator' as const, id: CLI_OWNER };
  const sessions = new Set<string>();
  return {
    via: 'in-process',
    async send(text, options) {
      let runId: string | undefined;
      const seen: RecordedEvent[] = [];
      const consider = (e: RecordedEvent) => {
        if (!isEvent(e, 'approval.requested') || !runId || e.data.runId !== runId) return;
        const data = e.data;
        options.onApproval?.({
          approvalId: data.approvalId,
          sessionId: data.sessionId,
          runId,
          tool: data.tool ?? null,
          arguments: data.arguments ?? null,
          reason: data.reason,
        });
      };
      const sub = app.store.events$.subscribe((e) => (runId ? consider(e) : seen.push(e)));
      try {
        const submitted = await app.submit({
          actor: cliUser(),
          text,
          ...(options.sessionId ? { sessionId: options.sessionId } : { channel: 'operator', conversationKey: 'cli' }),
          ...(options.plan !== undefined ? { plan: options.plan } : {}),
        });
        runId = submitted.runId;
        sessions.add(submitted.sessionId);
        for (const e of seen.splice(0)) consider(e);
        const outcome = await submitted.outcome;
        return {
          sessionId: submitted.sessionId,
          runId: submitted.runId,
          turnId: submitted.turnId,
          status: outcome.status,
          text: outcome.text,
          ...(outcome.error ? { error: outcome.error } : {}),
        };
      } finally {
        sub.unsubscribe();
      }
    },
    async decide(approvalId, decision) {
      if (decision === 'grant') await app.runtime.approvals.grant(approvalId, actor);
      else await app.runtime.approvals.deny(approvalId, actor);
    },
    async waitForTasks(sessionId) {
      for (;;) {
        const tasks = await app.runtime.controlPlane.listTasks(sessionId);
        if (!tasks.some((t) => ['created', 'active', 'waiting'].includes(t.status))) return;
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    async close() {
      const queued: LeftTask[] = [];
      for (const sessionId of sessions) {
        if (app.isClosing) break;
        queued.push(...(await app.runtime.controlPlane.listTasks(sessionId, { status: ['created'] })).map(left));
      }
      await app.close();
      const cancelledTasks = app.tasksCancelledAtClose.map(left);
      const cancelled = new Set(cancelledTasks.map((t) => t.taskId));
      return { cancelledTasks, queuedTasks: queued.filter((t) => !cancelled.has(t.taskId)) };
    },
  };
}
