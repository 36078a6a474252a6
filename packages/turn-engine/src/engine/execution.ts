import type { NewEvent } from '@demiurge/contracts';
import { type AppendStream, streamAppend } from '@demiurge/event-store';
import {
  checkEvents,
  type RunEventType,
  type ToolCallEventType,
  type TurnEventType,
  toolCallLifecycle,
  turnLifecycle,
} from '@demiurge/lifecycle';
import type { RunAggregate, RunLease } from '@demiurge/sessions';
import { appendedFact, callOf, evolveCallIn, evolveTurn, loadTurn, type TurnRecord } from '../turn-state.js';
import { type Cancellation, TurnStopped } from './cancellation.js';
import type { EngineDeps } from './options.js';

const TURN = turnLifecycle.streamType;
const TOOL_CALL = toolCallLifecycle.streamType;

/** One owner write of a drive: run events, the turn's and its calls' events, other streams in the same commit. */
export interface TurnWrite {
  readonly run?: NewEvent<RunEventType>[];
  readonly turn?: NewEvent<TurnEventType>[];
  /** Events of the turn's calls (a call the `turn` events just added included: it starts at version 0). */
  readonly calls?: readonly { readonly toolCallId: string; readonly events: NewEvent<ToolCallEventType>[] }[];
  readonly also?: AppendStream[];
}

/** A run checkpoint event (the stage the run reached). */
export const checkpoint = (runId: string, checkpointId: string, stage: string): NewEvent<RunEventType> => ({
  type: 'run.checkpointed',
  data: { runId, checkpointId, stage },
});

/**
 * The state of one driven turn, kept in memory: the run (as the last owner write left it) and the turn with
 * its calls, evolved from the events each write commits. Nothing is re-read on a pass: the run only when its
 * stream moved (another writer: a pause, a cancel, a heartbeat), everything on resume, recovery or a version
 * conflict.
 */
export class TurnExecution {
  constructor(
    private readonly deps: EngineDeps,
    public lease: RunLease,
    public run: RunAggregate,
    public turn: TurnRecord,
    readonly cancellation: Cancellation,
  ) {}

  /** Rebuilds the state from the log (resume, recovery). */
  static async load(deps: EngineDeps, lease: RunLease, turnId: string, cancellation: Cancellation) {
    const [run, turn] = await Promise.all([deps.runs.load(lease.runId), loadTurn(deps.store, turnId)]);
    return new TurnExecution(deps, lease, run, turn, cancellation);
  }

  get runId(): string {
    return this.lease.runId;
  }

  get turnId(): string {
    return this.turn.streamId;
  }

  /** The turn's session (recorded on `turn.started`). */
  get sessionId(): string {
    return this.turn.sessionId!;
  }

  get signal(): AbortSignal {
    return this.cancellation.signal;
  }

  /** Re-reads the run only when another writer moved its stream since this drive last saw it. */
  async refreshRun(): Promise<RunAggregate> {
    if ((await this.deps.store.streamVersion(this.runId)) !== this.run.version) {
      this.run = await this.deps.runs.load(this.runId);
    }
    return this.run;
  }

  /** Re-reads the run and the turn from the log (after a stop: what the log says now). */
  async reload(): Promise<void> {
    [this.run, this.turn] = await Promise.all([
      this.deps.runs.load(this.runId),
      loadTurn(this.deps.store, this.turnId),
    ]);
  }

  /**
   * An owner write, fenced by the run lease (`RunRuntime.ownedAppend`): `decide` sees the run as the write reads
   * it; the turn and call events are checked by their machines at the versions this drive holds. A write while
   * the run is cancelling is refused with {@link TurnStopped} unless `evenWhenCancelling` (settling is the
   * cancel contract). On success the run and turn in memory become what was committed; a version conflict
   * re-reads the turn before deciding again.
   */
  async write(
    decide: (run: RunAggregate) => TurnWrite | Promise<TurnWrite>,
    options: { evenWhenCancelling?: boolean } = {},
  ): Promise<void> {
    let attempt = 0;
    let committed: TurnRecord | undefined;
    this.run = await this.deps.runs.ownedAppend(this.lease, async (run) => {
      if (attempt++ > 0) this.turn = await loadTurn(this.deps.store, this.turnId);
      if (run.state === 'cancelling' && !options.evenWhenCancelling) {
        throw new TurnStopped({ kind: 'cancel_requested' });
      }
      const w = await decide(run);
      let turn = this.turn;
      const streams: AppendStream[] = [];
      if (w.turn && w.turn.length > 0) {
        streams.push(streamAppend(TURN, turn, checkEvents(turnLifecycle, turn.state, w.turn, turn.streamId)));
        turn = w.turn.map((e) => appendedFact(this.deps.store, e)).reduce(evolveTurn, turn);
      }
      for (const { toolCallId, events } of w.calls ?? []) {
        const call = callOf(turn, toolCallId);
        if (!call) throw new Error(`tool call ${toolCallId} is not a call of turn ${turn.streamId}`);
        streams.push(streamAppend(TOOL_CALL, call, checkEvents(toolCallLifecycle, call.state, events, toolCallId)));
        turn = evolveCallIn(
          turn,
          toolCallId,
          events.map((e) => appendedFact(this.deps.store, e)),
        );
      }
      committed = turn;
      return { run: w.run ?? [], also: [...streams, ...(w.also ?? [])] };
    });
    if (committed) this.turn = committed;
  }
}
