import type { RecordedEvent } from '@demiurge/contracts';
import { StreamVersionConflictError } from '@demiurge/event-store';
import { IllegalTransitionError } from '@demiurge/lifecycle';
import { ProviderError } from '@demiurge/providers';
import { LIVE_RUN_STATES } from '@demiurge/sessions';
import { type StopReason, TurnStopped } from './cancellation.js';
import { budgetExhausted, fail, finish, outcomeOf, release, settleCancel } from './endings.js';
import type { TurnExecution } from './execution.js';
import { modelRound } from './model-round.js';
import { nextStep } from './next-step.js';
import type { EngineDeps, TurnOutcome } from './options.js';
import { whilePaused } from './pause-wait.js';
import { dispatchCall, recordUnknown } from './tool-dispatch.js';

/**
 * Drives a turn to an outcome: before every step asks {@link nextStep} what the turn's state calls for and
 * carries it out; the state stays in memory ({@link TurnExecution}). While it runs, the run's lease is kept
 * alive by a heartbeat (a failed heartbeat stops the drive: `lease_lost`) and a `run.cancel_requested` from
 * any process stops the step in flight (`cancel_requested`); a pause is honoured at the next step boundary.
 */
export async function runLoop(deps: EngineDeps, exec: TurnExecution): Promise<TurnOutcome> {
  const { cancellation } = exec;
  const runId = exec.runId;
  const watch = deps.store.events$.subscribe((event: RecordedEvent) => {
    // A cancel stops the call in flight; a pause does not (it is honoured at the next step boundary).
    if (event.streamId === runId && event.type === 'run.cancel_requested')
      cancellation.stop({ kind: 'cancel_requested' });
  });
  let ended = false;
  const beat = setInterval(
    () => {
      deps.runs.heartbeat(exec.lease).then(
        (next) => {
          exec.lease = next;
        },
        (error: unknown) => {
          // Writers racing on the run's stream (the turn's own checkpoints, a pause, a cancel) can outlast a
          // beat's retries on a loaded host: the lease is not lost while it holds, the next beat tries again.
          if (!ended && error instanceof StreamVersionConflictError && leaseHolds(deps, exec)) {
            return;
          }
          // A heartbeat in flight while the turn ends its run is refused by the run machine (`run ... is
          // completed`): the expected race, not a lost lease. Anything else is reported, and stops the drive.
          if (!ended && !runHasEnded(error)) {
            deps.logger.warn('the run lease heartbeat failed; the turn stops', { runId, error });
          }
          cancellation.stop({ kind: 'lease_lost', cause: error });
        },
      );
    },
    Math.max(1000, deps.runs.leaseMs / 3),
  );
  beat.unref?.();
  try {
    return await steps(deps, exec);
  } catch (err) {
    return await stopped(deps, exec, err);
  } finally {
    ended = true;
    clearInterval(beat);
    watch.unsubscribe();
  }
}

/** Whether the lease still holds past the next beat: one beat's interval to spare. */
function leaseHolds(deps: EngineDeps, exec: TurnExecution): boolean {
  const until = Date.parse(exec.lease.leaseUntil);
  return Number.isFinite(until) && until - deps.clock.now() > Math.max(1000, deps.runs.leaseMs / 3);
}

/**
 * Whether a heartbeat was refused because its run had already ended (completed, failed, cancelled,
 * archived): the run machine allows no `run.owner_heartbeat` there. Once a run has ended there is no lease
 * left to lose, so this refusal is the heartbeat racing the run's end, never a failure to report.
 */
function runHasEnded(error: unknown): boolean {
  return (
    error instanceof IllegalTransitionError &&
    error.aggregate === 'run' &&
    error.event === 'run.owner_heartbeat' &&
    !(LIVE_RUN_STATES as readonly string[]).includes(error.from)
  );
}

async function steps(deps: EngineDeps, exec: TurnExecution): Promise<TurnOutcome> {
  for (;;) {
    const run = await exec.refreshRun();
    const next = nextStep({ run, turn: exec.turn, stepBudget: deps.stepBudget });
    switch (next.kind) {
      case 'ended':
        return outcomeOf(exec, next.status);
      case 'settle_cancel':
        return await settleCancel(deps, exec, next.reason);
      case 'pause_wait':
        await whilePaused(deps, exec.runId, exec.signal);
        break;
      case 'stop_waiting':
        return outcomeOf(exec, 'waiting');
      case 'record_unknown':
        await recordUnknown(exec, next.call);
        break;
      case 'await_approval':
      case 'dispatch':
        await dispatchCall(deps, exec, next.call);
        break;
      case 'finish':
        return await finish(deps, exec, next.text);
      case 'budget_exhausted':
        return await budgetExhausted(deps, exec);
      case 'model_round':
        await modelRound(deps, exec, next.stepId);
        break;
    }
  }
}

/**
 * A step threw. The host closing releases the run; a stop for a cancel (or any abort) re-reads the log and
 * settles the cancel or reports the pause; a provider error fails the turn; anything else is rethrown.
 */
async function stopped(deps: EngineDeps, exec: TurnExecution, err: unknown): Promise<TurnOutcome> {
  const reason: StopReason | undefined =
    exec.cancellation.reason ?? (err instanceof TurnStopped ? err.reason : undefined);
  if (reason?.kind === 'host_closing') return await release(deps, exec);
  if (reason) {
    await exec.reload();
    if (exec.run.state === 'cancelling') return await settleCancel(deps, exec, exec.run.reason ?? 'cancelled');
    if (exec.run.state === 'paused') return outcomeOf(exec, 'paused');
  }
  if (err instanceof ProviderError) return await fail(exec, { code: err.code, message: err.message });
  throw err;
}
