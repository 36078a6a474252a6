import type { Actor } from '@demiurge/contracts';
import { type EventStore, type Loaded, loadAggregate } from '@demiurge/event-store';
import { type RunState, runFold } from '@demiurge/lifecycle';

/** A run as its stream says: the machine's state plus the facts ownership and resume are checked against. */
export interface RunAggregate extends Loaded<RunState> {
  readonly sessionId: string | null;
  /** Who started the run and owns it (run.started); null in logs written before principals were recorded. */
  readonly principal: Actor | null;
  readonly owner: string | null;
  readonly leaseToken: string | null;
  readonly leaseUntil: string | null;
  readonly stage: string | null;
  readonly checkpointId: string | null;
  /** From run.blocked / run.cancelled, kept while blocked, cancelled or archived; else null. */
  readonly resumable: boolean | null;
  readonly reason: string | null;
}

/** The states a run is still going in (its owner may be executing it). */
export const LIVE_RUN_STATES: readonly RunState[] = ['queued', 'running', 'waiting', 'paused', 'blocked', 'cancelling'];
export const isLiveRun = (state: RunState): boolean => LIVE_RUN_STATES.includes(state);

/**
 * Loads a run with the one run fold (`runFold` in `@demiurge/lifecycle`, shared with the runs projector):
 * the machine checks every event, and a heartbeat or expiry naming a stale lease token changes nothing.
 */
export async function loadRun(store: EventStore, runId: string): Promise<RunAggregate> {
  const loaded = await loadAggregate(store, runFold, runId);
  const { status, sessionId, principal, owner, leaseToken, leaseUntil, stage, checkpointId, resumable, reason } =
    loaded.state;
  return {
    streamId: loaded.streamId,
    version: loaded.version,
    events: loaded.events,
    state: status,
    sessionId,
    principal,
    owner,
    leaseToken,
    leaseUntil,
    stage,
    checkpointId,
    resumable,
    reason,
  };
}
