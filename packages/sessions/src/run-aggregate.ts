import type { RecordedEvent } from '@demiurge/contracts';
import { type EventStore, type Loaded, loadAggregate } from '@demiurge/event-store';
import { type RunFacts, type RunState, runFold } from '@demiurge/lifecycle';

/** The run facts ownership and resume are checked against (the fields of `RunFacts` the command side uses). */
type RunAggregateFacts = Pick<
  RunFacts,
  'sessionId' | 'principal' | 'owner' | 'leaseToken' | 'leaseUntil' | 'stage' | 'checkpointId' | 'resumable' | 'reason'
>;

/** A run as its stream says: the machine's state plus the facts ownership and resume are checked against. */
export interface RunAggregate extends Loaded<RunState>, RunAggregateFacts {}

/** The states a run is still going in (its owner may be executing it). */
export const LIVE_RUN_STATES: readonly RunState[] = ['queued', 'running', 'waiting', 'paused', 'blocked', 'cancelling'];
export const isLiveRun = (state: RunState): boolean => LIVE_RUN_STATES.includes(state);

/**
 * Loads a run with the one run fold (`runFold` in `@demiurge/lifecycle`, shared with the runs projector):
 * the machine checks every event, and a heartbeat or expiry naming a stale lease token changes nothing.
 */
export async function loadRun(store: EventStore, runId: string): Promise<RunAggregate> {
  const loaded = await loadAggregate(store, runFold, runId);
  return toAggregate(loaded.streamId, loaded.version, loaded.events, loaded.state);
}

/** A run before its first event (state `none`, version 0). */
export function initialRun(runId: string): RunAggregate {
  return toAggregate(runId, 0, [], runFold.initialState);
}

/**
 * The run after one more of its events, with the same fold as {@link loadRun} (`runFold`): an event just
 * appended (type and data, no envelope: it is not listed in `events`) or a recorded one. Pure; an event the
 * run machine refuses throws `IllegalTransitionError`.
 */
export function applyRunEvent(run: RunAggregate, event: Pick<RecordedEvent, 'type' | 'data'>): RunAggregate {
  const facts: RunFacts = {
    ...runFold.initialState,
    status: run.state,
    runId: run.streamId,
    sessionId: run.sessionId,
    principal: run.principal,
    owner: run.owner,
    leaseToken: run.leaseToken,
    leaseUntil: run.leaseUntil,
    stage: run.stage,
    checkpointId: run.checkpointId,
    resumable: run.resumable,
    reason: run.reason,
  };
  const recorded = 'streamVersion' in event;
  // The fold reads only the type and data of an event.
  const next = runFold.evolve(facts, event as RecordedEvent, run.streamId);
  return toAggregate(
    run.streamId,
    run.version + 1,
    recorded ? [...run.events, event as RecordedEvent] : run.events,
    next,
  );
}

function toAggregate(
  streamId: string,
  version: number,
  events: readonly RecordedEvent[],
  facts: RunFacts,
): RunAggregate {
  const { status, sessionId, principal, owner, leaseToken, leaseUntil, stage, checkpointId, resumable, reason } = facts;
  return {
    streamId,
    version,
    events,
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
