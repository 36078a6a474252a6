import type { Actor, RecordedEvent } from '@demiurge/contracts';
import type { Loaded } from '@demiurge/control-plane';
import type { EventStore } from '@demiurge/event-store';
import { assertTransition, type RunState, runLifecycle } from '@demiurge/lifecycle';

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

/** A run before its first event (state `none`, version 0). */
export function initialRun(runId: string): RunAggregate {
  return {
    streamId: runId,
    state: runLifecycle.initialState,
    version: 0,
    events: [],
    sessionId: null,
    principal: null,
    owner: null,
    leaseToken: null,
    leaseUntil: null,
    stage: null,
    checkpointId: null,
    resumable: null,
    reason: null,
  };
}

/**
 * One event applied to a run (pure): the state through the run machine (an illegal event throws
 * `IllegalTransitionError`), the version plus one, the facts the event carries. `events` lists the recorded
 * events folded (an event given without envelope, e.g. one just appended, is not listed).
 */
export function evolveRun(run: RunAggregate, event: Pick<RecordedEvent, 'type' | 'data'>): RunAggregate {
  const state = assertTransition(runLifecycle, run.state, event as never, run.streamId);
  const next = {
    ...run,
    state,
    version: run.version + 1,
    events: 'streamVersion' in event ? [...run.events, event as RecordedEvent] : run.events,
  };
  const d = event.data as Record<string, unknown>;
  switch (event.type) {
    case 'run.queued':
      return { ...next, sessionId: d.sessionId as string };
    case 'run.started':
      return { ...next, principal: (d.principal as Actor | undefined) ?? null };
    case 'run.owner_claimed':
    case 'run.owner_heartbeat':
      return {
        ...next,
        owner: d.owner as string,
        leaseToken: d.leaseToken as string,
        leaseUntil: d.leaseUntil as string,
      };
    case 'run.owner_lease_expired':
      return { ...next, owner: null, leaseToken: null, leaseUntil: null };
    case 'run.checkpointed':
      return { ...next, stage: d.stage as string, checkpointId: d.checkpointId as string };
    case 'run.blocked':
    case 'run.cancelled':
      return { ...next, resumable: d.resumable as boolean, reason: d.reason as string };
    case 'run.waiting':
    case 'run.paused':
    case 'run.cancel_requested':
      return { ...next, reason: d.reason as string };
    case 'run.resumed':
      return { ...next, reason: null };
    default:
      return next;
  }
}

/** Folds a run's stream through the run machine ({@link evolveRun}). */
export async function loadRun(store: EventStore, runId: string): Promise<RunAggregate> {
  let run = initialRun(runId);
  for (const event of await store.readStream(runId)) {
    if (event.streamType !== runLifecycle.streamType) break;
    run = evolveRun(run, event);
  }
  return run;
}
