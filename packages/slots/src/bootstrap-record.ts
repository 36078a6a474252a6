import { isEvent } from '@demiurge/contracts';
import type { EventStore } from '@demiurge/event-store';
import {
  type BootstrapView,
  bootstrapKey,
  endsBootstrap,
  SlotRunCollections,
  slotRunsProjector,
} from './slot-runs.projector.js';

/** How often a bootstrap slot has run in a session, whether it is done there, and whether a run is open. */
export interface BootstrapRecord {
  readonly runs: number;
  readonly done: boolean;
  /** Milliseconds when the last run started, while it has not ended; else null. */
  readonly runningSince: number | null;
}

/**
 * The bootstrap record of (session, slot): from the `slot-runs` projection when the store runs
 * {@link slotRunsProjector}, else by reading the log's `slot.*` events (slower: every slot run is read).
 */
export async function bootstrapRecord(store: EventStore, sessionId: string, slotId: string): Promise<BootstrapRecord> {
  if (store.projectorNames.includes(slotRunsProjector.name)) {
    const view = await store
      .projection(slotRunsProjector.name)
      .get<BootstrapView>(SlotRunCollections.bootstrap, bootstrapKey(sessionId, slotId));
    return {
      runs: view?.runs ?? 0,
      done: view?.done ?? false,
      runningSince: view?.runningSince ? Date.parse(view.runningSince) : null,
    };
  }
  const mine = new Set<string>();
  let done = false;
  let open: { slotRunId: string; since: number } | null = null;
  for await (const event of store.iterate({ types: slotRunsProjector.handles })) {
    if (!isEvent(event, 'slot.started', 'slot.finished', 'slot.failed', 'slot.timed_out')) continue;
    const { slotRunId } = event.data;
    if (event.type === 'slot.started') {
      const d = event.data;
      if (d.phase === 'bootstrap' && d.sessionId === sessionId && d.slotId === slotId) {
        mine.add(slotRunId);
        open = { slotRunId, since: Date.parse(event.recordedAt) };
      }
    } else if (mine.has(slotRunId)) {
      done ||= endsBootstrap(event);
      if (open?.slotRunId === slotRunId) open = null;
    }
  }
  return { runs: mine.size, done, runningSince: open?.since ?? null };
}
