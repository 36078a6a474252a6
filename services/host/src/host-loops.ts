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

/** One scheduler round: due schedule times recorded, then up to four fires run (each claimed just before). */
export function schedulerRound(scheduler: SchedulerRuntime, logger: Logger): () => Promise<void> {
  return async () => {
    await scheduler.tick();
    for (const fire of await scheduler.runDue({ limit: 4 })) {
      if (fire.outcome === 'error') logger.error(`schedule ${fire.scheduleId}: ${String(fire.cause)}`);
    }
  };
}
