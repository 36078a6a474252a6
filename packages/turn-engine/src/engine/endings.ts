import { ErrorCode, IdPrefix } from '@demiurge/contracts';
import { streamAppend } from '@demiurge/event-store';
import { turnLifecycle } from '@demiurge/lifecycle';
import { StaleRunLeaseError } from '@demiurge/sessions';
import { decideToolCall, decideTurn } from '../turn.decider.js';
import { callFacts, type TurnRecord, turnFacts } from '../turn-state.js';
import { TurnStopped } from './cancellation.js';
import type { TurnExecution } from './execution.js';
import type { EngineDeps, TurnOutcome } from './options.js';

const usageOf = (turn: TurnRecord) =>
  turn.steps.reduce(
    (u, s) => ({
      inputTokens: u.inputTokens + s.usage.inputTokens,
      outputTokens: u.outputTokens + s.usage.outputTokens,
    }),
    { inputTokens: 0, outputTokens: 0 },
  );

/**
 * The last model round asked for no tools: its text is the answer. The output slots (if any) run first
 * and may send it; the answer is recorded once (by the send that carried it, else here). A slot failure fails
 * the turn.
 */
export async function finish(deps: EngineDeps, exec: TurnExecution, text: string): Promise<TurnOutcome> {
  let answerMessageId: string | undefined;
  if (deps.hooks?.output) {
    try {
      ({ answerMessageId } = await deps.hooks.output({
        sessionId: exec.sessionId,
        turnId: exec.turnId,
        runId: exec.runId,
        text,
        signal: exec.signal,
        selection: exec.turn.selection,
        pin: exec.turn.core,
      }));
    } catch (err) {
      if (err instanceof TurnStopped) throw err;
      const code = (err as { code?: unknown }).code;
      return fail(exec, {
        code: typeof code === 'string' ? code : 'slot_failed',
        message: (err as Error).message || String(err),
      });
    }
  }
  const messageId = answerMessageId ?? deps.ids.next(IdPrefix.message);
  const answer = answerMessageId
    ? []
    : [
        deps.sessions.messageEvent({
          sessionId: exec.sessionId,
          role: 'assistant',
          text,
          turnId: exec.turnId,
          messageId,
        }),
      ];
  const usage = usageOf(exec.turn);
  // The session is read inside the write: a retry after another writer moved it reads it again.
  await exec.write(async () => ({
    run: [{ type: 'run.completed', data: { runId: exec.runId } }],
    turn: decideTurn(
      { type: 'complete', turnId: exec.turnId, sessionId: exec.sessionId, outputMessageId: messageId, usage },
      turnFacts(exec.turn),
    ),
    also: answer.length > 0 ? [await deps.sessions.sessionStream(exec.sessionId, answer)] : [],
  }));
  return { turnId: exec.turnId, runId: exec.runId, status: 'completed', text, steps: exec.turn.steps.length };
}

/** The step budget is used up without a final answer: the turn and run fail, and the session hears why. */
export async function budgetExhausted(deps: EngineDeps, exec: TurnExecution): Promise<TurnOutcome> {
  const message =
    `Stopped: this turn used its whole step budget of ${deps.stepBudget} model rounds without a final answer. ` +
    'Send a new message to continue from here.';
  const messageId = deps.ids.next(IdPrefix.message);
  const error = { code: ErrorCode.BudgetExhausted, message };
  await exec.write(async () => ({
    run: [{ type: 'run.failed', data: { runId: exec.runId, error } }],
    turn: decideTurn({ type: 'fail', turnId: exec.turnId, sessionId: exec.sessionId, error }, turnFacts(exec.turn)),
    also: [
      await deps.sessions.sessionStream(exec.sessionId, [
        deps.sessions.messageEvent({
          sessionId: exec.sessionId,
          role: 'assistant',
          text: message,
          turnId: exec.turnId,
          messageId,
        }),
      ]),
    ],
  }));
  return {
    turnId: exec.turnId,
    runId: exec.runId,
    status: 'failed',
    text: message,
    error,
    steps: exec.turn.steps.length,
  };
}

/** The turn and run fail with `error` (a provider that failed, an output slot that failed). */
export async function fail(exec: TurnExecution, error: { code: string; message: string }): Promise<TurnOutcome> {
  await exec.write(() => ({
    run: [{ type: 'run.failed', data: { runId: exec.runId, error } }],
    turn: decideTurn({ type: 'fail', turnId: exec.turnId, sessionId: exec.sessionId, error }, turnFacts(exec.turn)),
  }));
  return {
    turnId: exec.turnId,
    runId: exec.runId,
    status: 'failed',
    text: error.message,
    error,
    steps: exec.turn.steps.length,
  };
}

/**
 * The cancel contract: no new dispatch; calls not started are cancelled, a started call with no outcome
 * (nobody runs it any more: its outcome would have been recorded) is unknown; the run's child tasks are
 * cancelled; the turn and run end with the reason, in one commit with the turn's end.
 */
export async function settleCancel(deps: EngineDeps, exec: TurnExecution, reason: string): Promise<TurnOutcome> {
  for (const step of exec.turn.steps) {
    for (const call of step.calls) {
      const events = decideToolCall({ type: 'settle_cancel', toolCallId: call.streamId, reason }, callFacts(call));
      if (events.length > 0) {
        await exec.write(() => ({ calls: [{ toolCallId: call.streamId, events }] }), { evenWhenCancelling: true });
      }
    }
  }
  const turn = exec.turn;
  await deps.runs.finishCancel(exec.runId, { reason, resumable: false }, () => [
    streamAppend(
      turnLifecycle.streamType,
      turn,
      decideTurn({ type: 'cancel', turnId: turn.streamId, sessionId: exec.sessionId, reason }, turnFacts(turn)),
    ),
  ]);
  return {
    turnId: turn.streamId,
    runId: exec.runId,
    status: 'cancelled',
    text: `cancelled: ${reason}`,
    steps: turn.steps.length,
  };
}

/**
 * The host is closing: give the run up (`run.owner_lease_expired`) so the next host start resumes it at once.
 * When another host took it already there is nothing to release; any other failure is reported through the
 * logger (the run is then resumed once its lease expires).
 */
export async function release(deps: EngineDeps, exec: TurnExecution): Promise<TurnOutcome> {
  try {
    await exec.write(
      (run) => ({
        run:
          run.owner && run.leaseToken
            ? [
                {
                  type: 'run.owner_lease_expired',
                  data: { runId: exec.runId, owner: run.owner, leaseToken: run.leaseToken },
                },
              ]
            : [],
      }),
      { evenWhenCancelling: true },
    );
  } catch (err) {
    if (!(err instanceof StaleRunLeaseError)) {
      deps.logger.error('could not release the run while the host closed; it resumes once its lease expires', {
        runId: exec.runId,
        error: err,
      });
    }
  }
  return { turnId: exec.turnId, runId: exec.runId, status: 'interrupted', text: '', steps: exec.turn.steps.length };
}

/** The outcome of a turn that ended already, or of a drive that stops with the run resumable. */
export function outcomeOf(exec: TurnExecution, status: TurnOutcome['status']): TurnOutcome {
  const text = status === 'paused' || status === 'waiting' ? '' : (exec.turn.steps.at(-1)?.content ?? '');
  return { turnId: exec.turnId, runId: exec.runId, status, text, steps: exec.turn.steps.length };
}
