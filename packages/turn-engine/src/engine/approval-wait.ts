import { type RecordedEvent, systemTimers } from '@demiurge/contracts';
import { type Loaded, loadAggregate } from '@demiurge/event-store';
import { type ApprovalFacts, approvalFold, evolveApproval } from '@demiurge/lifecycle';
import type { ToolCallRecord } from '../turn-state.js';
import { TurnStopped } from './cancellation.js';
import type { TurnExecution } from './execution.js';
import type { EngineDeps } from './options.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** How an approval wait ended: its status then (`requested` when nobody answered in time). */
export type ApprovalAnswer = 'granted' | 'denied' | 'expired' | 'requested';

/**
 * Requests an approval for the call (the run waits: `run.waiting`) and waits for the answer; after a restart
 * the approval already requested for this call is waited on instead. Resolves the approval id when granted;
 * otherwise records the call denied (an unanswered approval is expired) and resolves undefined. Rejects with
 * the drive's stop reason when it is stopped meanwhile.
 */
export async function askApproval(
  deps: EngineDeps,
  exec: TurnExecution,
  call: ToolCallRecord,
  reason: string,
): Promise<string | undefined> {
  const { approvals, clock } = deps;
  const ttl = deps.approvalTtlMs ?? 15 * 60_000;
  const existing = (await approvals.listForSession(exec.sessionId)).find((a) => a.toolCallId === call.streamId);
  let approvalId: string;
  let waitMs = ttl;
  if (existing) {
    approvalId = existing.approvalId;
    if (existing.expiresAt) waitMs = Math.max(0, Date.parse(existing.expiresAt) - clock.now());
  } else {
    const request = approvals.requestStream({
      sessionId: exec.sessionId,
      runId: exec.runId,
      toolCallId: call.streamId,
      tool: call.name,
      arguments: call.arguments,
      reason,
      expiresAt: iso(clock.now() + ttl),
    });
    approvalId = request.approvalId;
    await exec.write((run) => ({
      // Paused meanwhile: the approval is still requested; the run stays paused (resume finds it waiting on it).
      run:
        run.state === 'running'
          ? [{ type: 'run.waiting', data: { runId: exec.runId, reason: `approval ${approvalId} for ${call.name}` } }]
          : [],
      also: [request.stream],
    }));
  }
  const status = await waitForApproval(deps, approvalId, waitMs, exec.signal).catch(async (err: unknown) => {
    // Cancelled while it waited: nothing will ever run on this approval, so it is not left open for an operator
    // (a host closing or a lost lease keep it: the run resumes and waits on it again).
    if (err instanceof TurnStopped && err.reason.kind === 'cancel_requested') {
      await approvals.expire(approvalId).catch((error: unknown) =>
        // Answered or expired meanwhile (a version conflict), or the store refused: the cancel still stands.
        deps.logger.warn('could not expire the approval of a cancelled run', { runId: exec.runId, approvalId, error }),
      );
    }
    throw err;
  });
  await exec.write((run) => ({
    run: run.state === 'waiting' ? [{ type: 'run.resumed', data: { runId: exec.runId } }] : [],
  }));
  if (status === 'granted') return approvalId;
  if (status === 'requested') await approvals.expire(approvalId);
  await exec.write(() => ({
    calls: [
      {
        toolCallId: call.streamId,
        events: [
          {
            type: 'tool_call.denied',
            data: {
              toolCallId: call.streamId,
              policy: 'plan_mode',
              reason: `${reason} (approval ${approvalId} was ${status === 'requested' ? 'not answered in time' : status})`,
            },
          },
        ],
      },
    ],
  }));
  return undefined;
}

/** The answer an approval in `status` gives a waiting call, if it has answered (`requested`: not yet). */
const answerOf = (status: ApprovalFacts['status']): ApprovalAnswer | undefined =>
  status === 'granted' || status === 'denied' || status === 'expired' ? status : undefined;

/**
 * Waits for an approval's answer (from any process: the store publishes other processes' commits too) for up to
 * `ttlMs` of the engine's timers (`deps.timers`: the wall clock's, or a simulation's virtual time); `requested`
 * when none came. The approval is loaded and evolved with the one approval fold
 * (`approvalFold` in `@demiurge/lifecycle`): events published while it loads are applied after it, in stream
 * order. Rejects with the stop reason when `signal` aborts.
 */
export function waitForApproval(
  deps: EngineDeps,
  approvalId: string,
  ttlMs: number,
  signal: AbortSignal,
): Promise<ApprovalAnswer> {
  return new Promise<ApprovalAnswer>((resolve, reject) => {
    let approval: Loaded<ApprovalFacts> | undefined;
    const early: RecordedEvent[] = [];
    const done = (value: ApprovalAnswer | Error) => {
      sub.unsubscribe();
      cancelTimer();
      signal.removeEventListener('abort', onAbort);
      if (value instanceof Error) reject(value);
      else resolve(value);
    };
    const apply = (event: RecordedEvent) => {
      if (!approval || event.streamVersion <= approval.version) return;
      const state = evolveApproval(approval.state, event) ?? approval.state;
      approval = { ...approval, state, version: event.streamVersion };
      const answer = answerOf(state.status);
      if (answer) done(answer);
    };
    const onAbort = () =>
      done(signal.reason instanceof TurnStopped ? signal.reason : new TurnStopped({ kind: 'cancel_requested' }));
    const sub = deps.store.events$.subscribe((event: RecordedEvent) => {
      if (event.streamId !== approvalId) return;
      if (approval) apply(event);
      else early.push(event);
    });
    const cancelTimer = (deps.timers ?? systemTimers).after(ttlMs, () => done('requested'));
    signal.addEventListener('abort', onAbort);
    void loadAggregate(deps.store, approvalFold, approvalId).then(
      (loaded) => {
        approval = loaded;
        const answer = answerOf(loaded.state.status);
        if (answer) done(answer);
        else for (const event of early) apply(event);
      },
      (err: unknown) => done(err instanceof Error ? err : new Error(String(err))),
    );
  });
}
