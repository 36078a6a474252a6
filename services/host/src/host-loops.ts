import type { EventStore } from '@demiurge/event-store';
import { type PollLoop, pollLoop } from '@demiurge/event-store';
import type { SchedulerRuntime } from '@demiurge/scheduler';
import { describeFailure } from './describe-failure.js';
import type { Logger } from './logger.js';

/** A background loop of a host: `round` every `ms` (and at once on any of `wakeOn`), one round at a time. */
export function hostLoop(
  deps: { store: EventStore; logger: Logger },
  loop: { ms: number; round: () => Promise<unknown>; name: string; wakeOn?: readonly string[] },
): PollLoop {
  return pollLoop({
    round: loop.round,
    intervalMs: loop.ms,
    events$: deps.store.events$,
    wakeOn: loop.wakeOn ?? [],
    onError: (error) => deps.logger.error(describeFailure({ name: loop.name, error })),
  });
}

/**
 * The scheduler's loops, each every `tickMs`: its ticks ({@link schedulerTicks}), which wake its fires
 * ({@link scheduledFires}) when they enqueue one. Two loops, so that a fire's turn never holds up the ticks.
 */
export function schedulerLoops(
  deps: { store: EventStore; logger: Logger },
  scheduler: SchedulerRuntime,
  tickMs: number,
): PollLoop[] {
  const fires = hostLoop(deps, { ms: tickMs, round: scheduledFires(scheduler, deps.logger), name: 'scheduled fires' });
  const ticks = hostLoop(deps, { ms: tickMs, round: schedulerTicks(scheduler, () => fires.wake()), name: 'scheduler' });
  return [ticks, fires];
}

/**
 * The scheduler's ticks: the due schedule times recorded (`tick`), `onEnqueued` told when one was handed to durable
 * work. A loop of their own, apart from {@link scheduledFires}: a fire runs a turn, and the next due times must not
 * wait for it (they were first seen only after the turn, and after `missedAfterMs` recorded as missed).
 */
export function schedulerTicks(scheduler: SchedulerRuntime, onEnqueued: () => void): () => Promise<void> {
  return async () => {
    const report = await scheduler.tick();
    if (report.entries.some((e) => e.action === 'enqueued')) onEnqueued();
  };
}

/** The scheduler's fires: up to four run, one after the other (each claimed just before it runs). */
export function scheduledFires(scheduler: SchedulerRuntime, logger: Logger): () => Promise<void> {
  return async () => {
    for (const fire of await scheduler.runDue({ limit: 4 })) {
      if (fire.outcome === 'error') logger.error(`schedule ${fire.scheduleId}: ${String(fire.cause)}`);
    }
  };
}
