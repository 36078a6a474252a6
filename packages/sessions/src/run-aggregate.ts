import type { Actor } from '@demiurge/contracts';
import { type Loaded, loadAggregate } from '@demiurge/control-plane';
import type { EventStore } from '@demiurge/event-store';
import { type RunState, runLifecycle } from '@demiurge/lifecycle';

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
  /** From run.blocked / run.cancelled; null when the run never said. */
  readonly resumable: boolean | null;
  readonly reason: string | null;
}

/** The states a run is still going in (its owner may be executing it). */
export const LIVE_RUN_STATES: readonly RunState[] = ['queued', 'running', 'waiting', 'paused', 'blocked', 'cancelling'];
export const isLiveRun = (state: RunState): boolean => LIVE_RUN_STATES.includes(state);

/** Folds a run's stream through the run machine. */
export async function loadRun(store: EventStore, runId: string): Promise<RunAggregate> {
  const loaded = await loadAggregate(store, runLifecycle, runId);
  let sessionId: string | null = null;
  let principal: Actor | null = null;
  let owner: string | null = null;
  let leaseToken: string | null = null;
  let leaseUntil: string | null = null;
  let stage: string | null = null;
  let checkpointId: string | null = null;
  let resumable: boolean | null = null;
  let reason: string | null = null;
  for (const event of loaded.events) {
    const d = event.data as Record<string, unknown>;
    switch (event.type) {
      case 'run.queued':
        sessionId = d.sessionId as string;
        break;
      case 'run.started':
        principal = (d.principal as Actor | undefined) ?? null;
        break;
      case 'run.owner_claimed':
      case 'run.owner_heartbeat':
        owner = d.owner as string;
        leaseToken = d.leaseToken as string;
        leaseUntil = d.leaseUntil as string;
        break;
      case 'run.owner_lease_expired':
        owner = null;
        leaseToken = null;
        leaseUntil = null;
        break;
      case 'run.checkpointed':
        stage = d.stage as string;
        checkpointId = d.checkpointId as string;
        break;
      case 'run.blocked':
      case 'run.cancelled':
        resumable = d.resumable as boolean;
        reason = d.reason as string;
        break;
      case 'run.waiting':
      case 'run.paused':
      case 'run.cancel_requested':
        reason = d.reason as string;
        break;
      case 'run.resumed':
        reason = null;
        break;
    }
  }
  return { ...loaded, sessionId, principal, owner, leaseToken, leaseUntil, stage, checkpointId, resumable, reason };
}
