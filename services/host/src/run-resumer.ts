import type { Clock, RecordedEvent } from '@demiurge/contracts';
import { type EventStore, pollLoop } from '@demiurge/event-store';
import { runsReader } from '@demiurge/projector-runs';
import { type RunRuntime, StaleRunLeaseError } from '@demiurge/sessions';
import type { TurnEngine, TurnOutcome } from '@demiurge/turn-engine';

export interface RunResumerOptions {
  readonly store: EventStore;
  readonly engine: TurnEngine;
  readonly runs: RunRuntime;
  /** This host process (its runs are continued even while its old lease still runs). */
  readonly owner: string;
  readonly clock: Clock;
  readonly isHostAlive: (owner: string) => boolean;
  /** Whether the host is closing: nothing is taken over then. */
  readonly closing: () => boolean;
  /** Keeps the continued run's outcome for the host's close. */
  readonly track: (outcome: Promise<unknown>) => void;
  readonly onError: (runId: string, error: unknown) => void;
  /**
   * How often the live runs are looked over for ones whose owner's lease ran out (a host that died, and no
   * host restarted since): those are taken over (claimed and continued) here. Default: never (commands only).
   */
  readonly takeOverEveryMs?: number;
}

/** The events that ask a run's owner to act: continue it, or settle its cancel. */
const ACTIONABLE = new Set(['run.resumed', 'run.cancel_requested']);

/**
 * Lets a serving host act on run commands written by any process (`demiurge runs resume|cancel` from
 * another CLI process appends to the log; the store publishes other processes' commits): a run this host
 * drives notices them itself (its loop watches the log); a run that no live owner drives — paused when its
 * old host closed, or its owner gone — is claimed and continued (or its cancel settled) here. When several
 * hosts race, one claims it; the others' claims are refused and ignored. With `takeOverEveryMs`, the runs a
 * dead host owned are taken over too once their lease runs out, without waiting for a host to (re)start.
 */
export function watchRunCommands(options: RunResumerOptions): { close(): Promise<void> } {
  const pending = new Set<string>();
  const consider = async (runId: string): Promise<TurnOutcome | undefined> => {
    if (options.closing() || options.engine.liveRuns().includes(runId)) return undefined;
    const run = await options.runs.load(runId);
    if (run.state !== 'running' && run.state !== 'cancelling') return undefined;
    const now = new Date(options.clock.now()).toISOString();
    const ownerDead = run.owner !== null && !options.isHostAlive(run.owner);
    const ownerGone = ownerDead || run.owner === null || !run.leaseUntil || run.leaseUntil < now;
    if (!ownerGone && run.owner !== options.owner) return undefined; // its live owner acts on it
    return options.engine.resume(runId, undefined, { ownerDead });
  };
  const take = (runId: string) => {
    if (pending.has(runId)) return;
    pending.add(runId);
    const continued = consider(runId)
      .catch((error: unknown) => {
        if (error instanceof StaleRunLeaseError) return undefined; // another host took it over
        options.onError(runId, error);
        return undefined;
      })
      .finally(() => pending.delete(runId));
    options.track(continued);
  };
  const sub = options.store.events$.subscribe((event: RecordedEvent) => {
    if (ACTIONABLE.has(event.type)) take(event.streamId);
  });
  // A dead host's runs: judged by the runs read model's lease (the database clock on PostgreSQL), then
  // `consider` decides from the run's stream; when several hosts try, one claims it.
  const sweep =
    options.takeOverEveryMs === undefined
      ? undefined
      : pollLoop({
          intervalMs: options.takeOverEveryMs,
          firstDelayMs: options.takeOverEveryMs,
          onError: (error) => options.onError('(live runs)', error),
          round: async () => {
            if (options.closing()) return;
            const now = new Date(options.clock.now()).toISOString();
            for (const run of await runsReader(options.store).live()) {
              const taken = run.status === 'running' || run.status === 'cancelling';
              if (taken && run.owner !== null && run.leaseUntil !== null && run.leaseUntil < now) take(run.runId);
            }
          },
        });
  return {
    close: async () => {
      sub.unsubscribe();
      await sweep?.close();
    },
  };
}
