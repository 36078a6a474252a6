import { type Actor, type Clock, type EventMeta, type IdGenerator, IdPrefix, type NewEvent } from '@demiurge/contracts';
import { NotFoundError, type RuntimeControlPlane } from '@demiurge/control-plane';
import {
  type AppendOptions,
  type AppendStream,
  commandLoop,
  type EventStore,
  streamAppend,
} from '@demiurge/event-store';
import { checkEvents, type RunEventType, runLifecycle } from '@demiurge/lifecycle';
import { RunNotOwnedError, RunNotResumableError, StaleRunLeaseError } from './errors.js';
import { applyRunEvent, isLiveRun, loadRun, type RunAggregate } from './run-aggregate.js';
import { mayCancelRun } from './run-ownership.js';

export interface RunRuntimeOptions {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  /** This host process: written on every ownership claim. */
  readonly owner: string;
  /** Owner lease length. Default 30 s. */
  readonly leaseMs?: number;
  /** Cancels the run's child tasks when the run is cancelled. */
  readonly controlPlane?: RuntimeControlPlane;
  readonly meta?: Partial<EventMeta>;
}

/** A live ownership of a run: present the token on every write the owner makes. */
export interface RunLease {
  readonly runId: string;
  readonly leaseToken: string;
  readonly leaseUntil: string;
}

const RUN = runLifecycle.streamType;
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Runs: durable execution attempts inside a session (seed 000) with an owner lease, checkpoint lineage,
 * current stage and terminal outcome. Cancel, pause, resume, block and archive are transitions of the
 * run machine; cancel also cancels the run's child tasks through the control plane.
 */
export class RunRuntime {
  readonly leaseMs: number;

  constructor(private readonly options: RunRuntimeOptions) {
    this.leaseMs = options.leaseMs ?? 30_000;
  }

  get owner(): string {
    return this.options.owner;
  }

  /**
   * A new run, started and owned by this host: the stream to append with the turn that starts it.
   * `principal` is who started it and owns it (see {@link mayCancelRun}).
   */
  startStream(
    sessionId: string,
    principal?: Actor,
    runId: string = this.options.ids.next(IdPrefix.run),
  ): { runId: string; lease: RunLease; stream: AppendStream } {
    const lease = this.newLease(runId);
    return {
      runId,
      lease,
      stream: {
        streamType: RUN,
        streamId: runId,
        expectedVersion: 'no_stream',
        events: [
          { type: 'run.queued', data: { runId, sessionId } },
          { type: 'run.started', data: { runId, owner: this.options.owner, ...(principal ? { principal } : {}) } },
          { type: 'run.owner_claimed', data: { runId, owner: this.options.owner, ...this.leaseData(lease) } },
        ],
      },
    };
  }

  /**
   * The run's part of an owner's write: `events` checked by the run machine, at the version just read,
   * after checking that `lease` is still the run's current, unexpired lease ({@link StaleRunLeaseError}).
   */
  async ownedStream(
    lease: RunLease,
    events: NewEvent<RunEventType>[],
  ): Promise<{ run: RunAggregate; stream: AppendStream }> {
    const run = await this.load(lease.runId);
    this.assertLease(run, lease);
    return { run, stream: streamAppend(RUN, run, checkEvents(runLifecycle, run.state, events, run.streamId)) };
  }

  /**
   * Appends an owner's write (the run stream plus `also`), retrying from a fresh `decide` when another
   * writer moved one of the streams (a heartbeat the run, another process the session of `also`).
   * Resolves with the run as it is after the write: the run the committed decision read, with its events applied.
   */
  async ownedAppend(
    lease: RunLease,
    decide: (
      run: RunAggregate,
    ) =>
      | { run: NewEvent<RunEventType>[]; also?: AppendStream[] }
      | Promise<{ run: NewEvent<RunEventType>[]; also?: AppendStream[] }>,
  ): Promise<RunAggregate> {
    return commandLoop(this.options.store, async () => {
      const run = await this.load(lease.runId);
      this.assertLease(run, lease);
      const d = await decide(run);
      const events = checkEvents(runLifecycle, run.state, d.run, run.streamId);
      const streams = [streamAppend(RUN, run, events), ...(d.also ?? [])];
      return { streams, result: events.reduce(applyRunEvent, run), options: this.appendOptions(run) };
    });
  }

  async heartbeat(lease: RunLease): Promise<RunLease> {
    const next = { ...lease, leaseUntil: iso(this.options.clock.now() + this.leaseMs) };
    await this.ownedAppend(lease, (run) => ({
      run: [
        {
          type: 'run.owner_heartbeat',
          data: { runId: run.streamId, owner: this.options.owner, ...this.leaseData(next) },
        },
      ],
    }));
    return next;
  }

  /**
   * Takes ownership of a live run whose owner is gone (no lease, the lease expired by the injected clock, or
   * `ownerDead`: the caller verified the owning process is dead): `run.owner_lease_expired` then
   * `run.owner_claimed` with a fresh token, in one commit.
   */
  async claimOwnership(runId: string, options: { ownerDead?: boolean } = {}): Promise<RunLease> {
    const lease = this.newLease(runId);
    await commandLoop(this.options.store, async () => {
      const run = await this.load(runId);
      if (!isLiveRun(run.state)) throw new RunNotResumableError(runId, `it is ${run.state}`);
      const now = iso(this.options.clock.now());
      const live = run.leaseToken && run.leaseUntil && run.leaseUntil >= now && !options.ownerDead;
      if (live && run.owner !== this.options.owner) {
        throw new StaleRunLeaseError(runId, `owned by ${run.owner} until ${run.leaseUntil}`);
      }
      const events: NewEvent<RunEventType>[] = [];
      if (run.leaseToken && run.owner) {
        events.push({ type: 'run.owner_lease_expired', data: { runId, owner: run.owner, leaseToken: run.leaseToken } });
      }
      events.push({ type: 'run.owner_claimed', data: { runId, owner: this.options.owner, ...this.leaseData(lease) } });
      return {
        streams: [streamAppend(RUN, run, checkEvents(runLifecycle, run.state, events, runId))],
        result: undefined,
        options: this.appendOptions(run),
      };
    });
    return lease;
  }

  /**
   * Asks the run to stop: its owner stops new dispatch and settles. Repeats and finished runs are no-ops.
   * `by` is who asks (recorded as the event's actor): a principal that may not cancel the run
   * ({@link mayCancelRun}) is refused with {@link RunNotOwnedError} and nothing is written.
   */
  async requestCancel(runId: string, reason: string, by?: Actor): Promise<RunAggregate> {
    await this.command(
      runId,
      (run) => {
        if (by && run.principal && !mayCancelRun(run.principal, run.sessionId, by)) {
          throw new RunNotOwnedError(runId, run.principal, by);
        }
        return run.state === 'cancelling' || !isLiveRun(run.state)
          ? []
          : [{ type: 'run.cancel_requested', data: { runId, reason } }];
      },
      undefined,
      by,
    );
    return this.load(runId);
  }

  /**
   * Ends a cancelling run: cancels its child tasks that are still going (through the control plane),
   * then `run.cancelled` with the reason and resumability. `also` is appended in the same commit.
   */
  async finishCancel(
    runId: string,
    outcome: { reason: string; resumable: boolean },
    also: (run: RunAggregate) => AppendStream[] = () => [],
  ): Promise<void> {
    const run = await this.load(runId);
    if (run.sessionId) await this.cancelChildTasks(run.sessionId, runId, outcome.reason);
    await this.command(
      runId,
      (r) => (r.state === 'cancelled' ? [] : [{ type: 'run.cancelled', data: { runId, ...outcome } }]),
      also,
    );
  }

  pause(runId: string, reason: string): Promise<void> {
    return this.command(runId, (run) =>
      run.state === 'paused' ? [] : [{ type: 'run.paused', data: { runId, reason } }],
    );
  }

  /** Resumes a paused, waiting or resumable blocked run; the owner then continues from its checkpoint. */
  resume(runId: string): Promise<void> {
    return this.command(runId, (run) => {
      if (run.state === 'running') return [];
      if (run.state === 'blocked' && run.resumable === false) {
        throw new RunNotResumableError(runId, `it is blocked and not resumable (${run.reason})`);
      }
      if (!['paused', 'waiting', 'blocked'].includes(run.state)) {
        throw new RunNotResumableError(runId, `it is ${run.state}`);
      }
      return [
        { type: 'run.resumed', data: { runId, ...(run.checkpointId ? { checkpointId: run.checkpointId } : {}) } },
      ];
    });
  }

  block(runId: string, reason: string, resumable: boolean): Promise<void> {
    return this.command(runId, () => [{ type: 'run.blocked', data: { runId, reason, resumable } }]);
  }

  archive(runId: string): Promise<void> {
    return this.command(runId, () => [{ type: 'run.archived', data: { runId } }]);
  }

  async get(runId: string): Promise<RunAggregate> {
    const run = await this.load(runId);
    if (run.state === 'none') throw new NotFoundError('run', runId);
    return run;
  }

  load(runId: string): Promise<RunAggregate> {
    return loadRun(this.options.store, runId);
  }

  private assertLease(run: RunAggregate, lease: RunLease): void {
    if (run.state === 'none') throw new NotFoundError('run', lease.runId);
    if (run.leaseToken !== lease.leaseToken) {
      throw new StaleRunLeaseError(run.streamId, run.owner ? `${run.owner} owns it now` : 'it has no owner now');
    }
  }

  private async cancelChildTasks(sessionId: string, runId: string, reason: string): Promise<void> {
    const cp = this.options.controlPlane;
    if (!cp) return;
    const tasks = await cp.listTasks(sessionId, { status: ['created', 'active', 'waiting', 'blocked'] });
    for (const task of tasks) {
      if (task.runId === runId) await cp.cancelTask({ sessionId, taskId: task.taskId }, `run cancelled: ${reason}`);
    }
  }

  private command(
    runId: string,
    decide: (run: RunAggregate) => NewEvent<RunEventType>[],
    also: (run: RunAggregate) => AppendStream[] = () => [],
    actor?: Actor,
  ): Promise<void> {
    return commandLoop(this.options.store, async () => {
      const run = await this.load(runId);
      if (run.state === 'none') throw new NotFoundError('run', runId);
      const events = checkEvents(runLifecycle, run.state, decide(run), runId);
      return {
        streams: events.length > 0 ? [streamAppend(RUN, run, events), ...also(run)] : [],
        result: undefined,
        options: this.appendOptions(run, actor),
      };
    });
  }

  private newLease(runId: string): RunLease {
    return {
      runId,
      leaseToken: this.options.ids.next('rls'),
      leaseUntil: iso(this.options.clock.now() + this.leaseMs),
    };
  }

  private leaseData(lease: RunLease) {
    return { leaseToken: lease.leaseToken, leaseUntil: lease.leaseUntil };
  }

  private appendOptions(run: RunAggregate, actor?: Actor): AppendOptions {
    return {
      meta: {
        actor: { kind: 'system', id: this.options.owner },
        runId: run.streamId,
        ...(run.sessionId ? { sessionId: run.sessionId } : {}),
        ...this.options.meta,
        ...(actor ? { actor } : {}),
      },
    };
  }
}
