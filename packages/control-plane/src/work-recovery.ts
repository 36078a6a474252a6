import { type AppendOptions, commandLoop, type EventStore, streamAppend } from '@demiurge/event-store';
import { workLifecycle } from '@demiurge/lifecycle';
import type { KindRegistry } from './kinds.js';
import { decideWork } from './work.decider.js';
import { loadWork, payloadProblem } from './work-aggregate.js';

const WORK = workLifecycle.streamType;

/**
 * Records that a lease ran out (`work.lease_expired`): claimed/running work goes to retry_scheduled,
 * sending work to unknown. Returns the new state, or undefined when the lease is live after all.
 */
export function expireLease(
  store: EventStore,
  workId: string,
  at: string,
  options: AppendOptions,
): Promise<'unknown' | 'retry_scheduled' | undefined> {
  return commandLoop<'unknown' | 'retry_scheduled' | undefined>(store, async () => {
    const item = await loadWork(store, workId);
    const events = decideWork({ type: 'expire_lease', workId, now: at }, item.facts);
    if (events.length === 0) return { streams: [], result: undefined };
    return {
      streams: [streamAppend(WORK, item, events)],
      result: item.state === 'sending' ? 'unknown' : 'retry_scheduled',
      options,
    };
  });
}

/** Sets a claimable item whose payload cannot be read aside (`work.corrupt`); true when it did. */
export function setAsideIfCorrupt(
  store: EventStore,
  kinds: KindRegistry,
  workId: string,
  options: AppendOptions,
): Promise<boolean> {
  return commandLoop(store, async () => {
    const item = await loadWork(store, workId);
    if (item.state !== 'queued' && item.state !== 'retry_scheduled') return { streams: [], result: false };
    const problem = payloadProblem(kinds, item);
    if (!problem) return { streams: [], result: false };
    return {
      streams: [streamAppend(WORK, item, [{ type: 'work.corrupt', data: { workId, detail: problem } }])],
      result: true,
      options,
    };
  });
}
