import type { RunState, TurnState } from '@demiurge/lifecycle';
import { sessionPrefix } from './runs.collections.js';

/** A run's status: any state of the run machine except the pre-creation `none`. */
export type RunStatus = Exclude<RunState, 'none'>;

/** A failure as `run.failed` and `tool_call.failed` record it. */
export interface RecordedFailure {
  readonly code: string;
  readonly message: string;
}

/**
 * One run (a durable execution attempt in a session) as the control plane and clients read it.
 * Times are `Date#toISOString()` strings.
 */
export interface RunView {
  readonly runId: string;
  readonly sessionId: string;
  readonly status: RunStatus;
  /**
   * The owner of `run.started` or of the current lease (`run.owner_claimed`); null before either and once
   * that lease expired (`run.owner_lease_expired`: the run waits for a new owner). Kept once the run ends.
   */
  readonly owner: string | null;
  /**
   * The token of the current lease (`run.owner_claimed`). A heartbeat or expiry naming another token is
   * stale and changes nothing. Null before a claim, after the lease expired, after a `run.started` by
   * another owner, and once the run is final.
   */
  readonly leaseToken: string | null;
  /** When the current lease ends (`run.owner_claimed`, extended by `run.owner_heartbeat`); same lifetime as `leaseToken`. */
  readonly leaseUntil: string | null;
  /** `stage` of the last `run.checkpointed`. */
  readonly stage: string | null;
  /** `checkpointId` of the last `run.checkpointed`. */
  readonly lastCheckpointId: string | null;
  /** Every turn started for this run (`turn.started` with its `runId`), in start order. */
  readonly turnIds: readonly string[];
  /** The turn running now; cleared when it completes, fails or is cancelled. */
  readonly currentTurnId: string | null;
  /** The reason of the last `run.waiting/paused/blocked/cancel_requested/cancelled`; cleared by `run.resumed`. */
  readonly reason: string | null;
  /** `resumable` of `run.blocked` while blocked, of `run.cancelled` once cancelled (archiving keeps it); else null. */
  readonly resumable: boolean | null;
  /** The `run.failed` error. */
  readonly error: RecordedFailure | null;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** When it completed, failed or was cancelled (archiving keeps it). */
  readonly endedAt: string | null;
}

/** An entry of `runs-by-session`: every run of a session, final ones included. */
export interface SessionRunEntry {
  readonly runId: string;
  readonly status: RunStatus;
}

/** An entry of `live-runs`: a run not yet in a final status. */
export interface LiveRunEntry {
  readonly runId: string;
  readonly sessionId: string;
  readonly status: RunStatus;
  readonly owner: string | null;
  readonly leaseUntil: string | null;
}

/** An entry of `turn-runs`: the run a turn was started for, and the turn's state (turn machine). */
export interface TurnRunEntry {
  readonly runId: string;
  readonly status: Exclude<TurnState, 'none'>;
}

/**
 * The statuses after which a run never runs again: `completed`, `failed`, `cancelled` (which only
 * `run.archived` leaves) and `archived`. A run in any other status is in `live-runs`.
 */
export const FINAL_RUN_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'cancelled', 'archived'];

/**
 * Whether a run in this status is over.
 * @example
 * isRunFinal('cancelling'); // false: still settling in-flight work, so still in `live-runs`
 */
export const isRunFinal = (status: RunStatus): boolean => FINAL_RUN_STATUSES.includes(status);

/**
 * The `runs-by-session` id: session then run (run ids are time-sortable, so a session lists in queue order).
 * @example
 * await reader.list<SessionRunEntry>(RunsCollections.runsBySession, { prefix: sessionPrefix(sessionId) });
 */
export const sessionRunKey = (sessionId: string, runId: string): string => `${sessionPrefix(sessionId)}${runId}`;
