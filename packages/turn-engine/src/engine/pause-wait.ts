import { type RecordedEvent, systemTimers } from '@demiurge/contracts';
import { TurnStopped } from './cancellation.js';
import type { EngineDeps } from './options.js';

/**
 * Waits while the run is paused: until its stream says otherwise (`run.resumed`, or a cancel, from any
 * process: the store publishes other processes' commits too; a slow poll, on the engine's timers, backs that up). Rejects with the stop
 * reason when `signal` aborts (a cancel, the host closing, the lease lost): the loop settles that.
 */
export function whilePaused(deps: EngineDeps, runId: string, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const done = (error?: unknown) => {
      if (settled) return;
      settled = true;
      sub.unsubscribe();
      cancelPoll();
      signal.removeEventListener('abort', onAbort);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onAbort = () =>
      done(signal.reason instanceof TurnStopped ? signal.reason : new TurnStopped({ kind: 'cancel_requested' }));
    const check = () => {
      deps.runs.load(runId).then(
        (run) => {
          if (run.state !== 'paused') done();
        },
        (err: unknown) => done(err),
      );
    };
    const sub = deps.store.events$.subscribe((event: RecordedEvent) => {
      if (event.streamId === runId && event.type !== 'run.owner_heartbeat') check();
    });
    // The slow poll, on the engine's timers (a simulation's virtual time: a round each time its clock moves).
    const timers = deps.timers ?? systemTimers;
    const arm = (): (() => void) =>
      timers.after(
        1_000,
        () => {
          check();
          if (!settled) cancelPoll = arm();
        },
        { unref: true },
      );
    let cancelPoll = arm();
    signal.addEventListener('abort', onAbort);
    if (signal.aborted) onAbort();
    else check();
  });
}
