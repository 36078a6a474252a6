import type { ToolCallResolution } from '@demiurge/contracts';
import type { ToolCallState } from '@demiurge/lifecycle';
import type { RecordedFailure } from './run.view.js';

/** A tool call's status: any state of the tool-call machine except the pre-creation `none`. */
export type ToolCallStatus = Exclude<ToolCallState, 'none'>;

/** One foreground tool call (an effect inside a turn), from the model's request to its outcome. */
export interface ToolCallView {
  readonly toolCallId: string;
  readonly sessionId: string;
  readonly turnId: string;
  readonly runId: string | null;
  /** The model-loop step (`s1`, `s2`, ...) whose round asked for it. */
  readonly stepId: string;
  readonly tool: string;
  /** The tool's declared effect class for these arguments (`read`, `write.file`, `shell`, ...). */
  readonly effect: string | null;
  readonly idempotent: boolean;
  /** The arguments the model gave (parsed JSON); null when the request carried none. */
  readonly arguments: unknown;
  readonly status: ToolCallStatus;
  /** The (bounded) text of `tool_call.succeeded`. */
  readonly output: string | null;
  /** The `tool_call.failed` error. */
  readonly error: RecordedFailure | null;
  /** The policy and reason of `tool_call.denied`. */
  readonly denial: { readonly policy: string; readonly reason: string } | null;
  /** The reason of `tool_call.cancelled` or `tool_call.unknown`. */
  readonly reason: string | null;
  /** The decision of `tool_call.resolved`, for a call whose outcome was unknown. */
  readonly resolution: ToolCallResolution | null;
  readonly requestedAt: string;
  readonly updatedAt: string;
}

/** How many digits the number of a step id is padded to in keys (`s7` → `s0007`). */
export const STEP_KEY_DIGITS = 4;

/**
 * A step id as it appears in keys: its trailing number zero-padded to {@link STEP_KEY_DIGITS} digits, so
 * steps sort numerically (`s2` → `s0002` before `s10` → `s0010`). An id without a trailing number is kept
 * as is. The order is numeric up to 9999 (`s10000` would sort before `s9999`); no turn comes near that
 * many model rounds.
 * @example
 * stepKey('s10'); // 's0010'
 * stepKey('step-1'); // 'step-0001'
 */
export function stepKey(stepId: string): string {
  const match = /^(.*?)(\d+)$/.exec(stepId);
  return match ? `${match[1]}${match[2]!.padStart(STEP_KEY_DIGITS, '0')}` : stepId;
}

/** The prefix of a turn's entries in `tool-calls-by-turn`. */
export const turnPrefix = (turnId: string): string => `${turnId}/`;

/**
 * The `tool-calls-by-turn` id: turn, then {@link stepKey} of the step, then tool call, so a turn's calls
 * list in step order (and, within a step, in id order, which is request order for time-sortable ids).
 * @example
 * const calls = await reader.list<string>(RunsCollections.toolCallsByTurn, { prefix: turnPrefix(turnId) });
 * // ['tcl_...(s1)', 'tcl_...(s2)', 'tcl_...(s10)']
 */
export const turnToolCallKey = (turnId: string, stepId: string, toolCallId: string): string =>
  `${turnPrefix(turnId)}${stepKey(stepId)}/${toolCallId}`;
