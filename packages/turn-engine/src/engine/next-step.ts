import type { RunState } from '@demiurge/lifecycle';
import type { ToolCallRecord, TurnRecord } from '../turn-state.js';

/** What the engine knows when it decides: the run's state and reason, the turn with its calls, the budget. */
export interface TurnView {
  readonly run: { readonly state: RunState; readonly reason: string | null };
  readonly turn: TurnRecord;
  /** Model rounds per turn. */
  readonly stepBudget: number;
}

/**
 * The next step of a turn, decided from its state alone:
 * - `ended`: the turn is no longer running (completed, failed or cancelled): report its outcome;
 * - `settle_cancel`: the run is being cancelled: settle the calls and end the turn and run with `reason`;
 * - `pause_wait`: the run is paused: wait at this step boundary for a resume (or a cancel);
 * - `stop_waiting`: the run waits (with no call pending) or is blocked: the drive ends, the run stays resumable;
 * - `record_unknown`: call N was started by an owner that is gone with no outcome: it becomes `unknown`, never re-run;
 * - `await_approval`: the run waits on the approval of call N: wait for the answer, then dispatch it;
 * - `dispatch`: run call N (policy, approval, effect recording);
 * - `finish`: the last model round asked for no tool: its text is the answer (after a restart too: a fully
 *   recorded response is finalized without asking the provider again);
 * - `budget_exhausted`: every model round of the budget is used without a final answer;
 * - `model_round`: ask the model (step `stepId`).
 */
export type NextStep =
  | { readonly kind: 'ended'; readonly status: 'completed' | 'failed' | 'cancelled' }
  | { readonly kind: 'settle_cancel'; readonly reason: string }
  | { readonly kind: 'pause_wait' }
  | { readonly kind: 'stop_waiting' }
  | { readonly kind: 'record_unknown'; readonly stepId: string; readonly call: ToolCallRecord }
  | { readonly kind: 'await_approval'; readonly stepId: string; readonly call: ToolCallRecord }
  | { readonly kind: 'dispatch'; readonly stepId: string; readonly call: ToolCallRecord }
  | { readonly kind: 'finish'; readonly text: string }
  | { readonly kind: 'budget_exhausted' }
  | { readonly kind: 'model_round'; readonly stepId: string };

/**
 * What to do next with a turn (pure: no IO, no clock). The loop asks it before every step and carries it out.
 * @example
 * nextStep({ run: { state: 'running', reason: null }, turn, stepBudget: 90 }); // { kind: 'model_round', stepId: 's1' }
 */
export function nextStep({ run, turn, stepBudget }: TurnView): NextStep {
  if (turn.state !== 'running') {
    return {
      kind: 'ended',
      status: turn.state === 'completed' ? 'completed' : turn.state === 'cancelled' ? 'cancelled' : 'failed',
    };
  }
  if (run.state === 'cancelling') return { kind: 'settle_cancel', reason: run.reason ?? 'cancelled' };
  if (run.state === 'paused') return { kind: 'pause_wait' };
  const last = turn.steps.at(-1);
  const pending = last?.calls.find((c) => c.state === 'requested' || c.state === 'started');
  if (run.state === 'blocked' || (run.state === 'waiting' && !pending)) return { kind: 'stop_waiting' };
  if (last && pending) {
    if (pending.state === 'started') return { kind: 'record_unknown', stepId: last.stepId, call: pending };
    if (run.state === 'waiting') return { kind: 'await_approval', stepId: last.stepId, call: pending };
    return { kind: 'dispatch', stepId: last.stepId, call: pending };
  }
  if (last && last.calls.length === 0) return { kind: 'finish', text: last.content };
  if (turn.steps.length >= stepBudget) return { kind: 'budget_exhausted' };
  return { kind: 'model_round', stepId: `s${turn.steps.length + 1}` };
}
