import { isEvent } from '@demiurge/contracts';
import { commandLoop, type EventStore, loadAggregate, streamAppend } from '@demiurge/event-store';
import { checkEvents, toolCallLifecycle } from '@demiurge/lifecycle';
import { runsReader } from '@demiurge/projector-runs';
import { currentBootId, parseStartMarker, stopTree } from '@demiurge/workers';

/** One orphaned foreground process group the host start stopped. */
export interface StoppedOrphan {
  readonly toolCallId: string;
  readonly host: string;
  readonly pid: number;
  readonly finalSignal: 'SIGTERM' | 'SIGKILL' | null;
}

/**
 * Stops what a killed host left running of its foreground tool calls (`shell`): every process group recorded by
 * `tool_call.process_started` whose host is dead and whose call never got an outcome from it (still `started`,
 * or `unknown` after a recovery), and not yet stopped. A group is only signalled once its start marker (or the
 * spawn-id tag of a member) proves it is that very process tree — a reused pid is never touched — and each stop
 * is recorded as `tool_call.process_stopped` (so a later start does not look at it again). A call whose host recorded an
 * outcome needs nothing: the foreground runner returns only once the whole group is gone.
 */
export async function stopOrphanedToolProcesses(
  store: EventStore,
  options: { isHostAlive: (host: string) => boolean; graceMs: number; owner: string },
): Promise<StoppedOrphan[]> {
  const boot = currentBootId();
  if (boot === undefined) return []; // no start markers to check on this platform: never signal blind
  const reader = runsReader(store);
  const stopped: StoppedOrphan[] = [];
  const records = await store.readAll({ types: ['tool_call.process_started', 'tool_call.process_stopped'] });
  const done = new Set(records.filter((e) => e.type === 'tool_call.process_stopped').map((e) => e.streamId));
  for (const event of records) {
    if (!isEvent(event, 'tool_call.process_started') || done.has(event.streamId)) continue;
    const p = event.data;
    if (parseStartMarker(p.startMarker)?.bootId !== boot || options.isHostAlive(p.host)) continue;
    const call = await reader.toolCall(p.toolCallId);
    if (call && call.status !== 'started' && call.status !== 'unknown') continue;
    const report = await stopTree(
      { spawnId: p.spawnId, host: p.host, pid: p.pid, pgid: p.pgid, platform: p.platform, startMarker: p.startMarker },
      { graceMs: options.graceMs, kill: (pid, signal) => process.kill(pid, signal) },
    );
    if (!report.signalled || report.finalSignal === null) continue;
    const reason = `its host ${p.host} died and left it running; stopped by the next host start`;
    await commandLoop(store, async () => {
      const call = await loadAggregate(store, toolCallLifecycle, p.toolCallId);
      const events = checkEvents(
        toolCallLifecycle,
        call.state,
        [
          {
            type: 'tool_call.process_stopped',
            data: { toolCallId: p.toolCallId, pid: p.pid, signal: report.finalSignal!, reason },
          },
        ],
        p.toolCallId,
      );
      return {
        streams: [streamAppend(toolCallLifecycle.streamType, call, events)],
        result: undefined,
        options: { meta: { actor: { kind: 'system', id: options.owner } } },
      };
    });
    stopped.push({ toolCallId: p.toolCallId, host: p.host, pid: p.pid, finalSignal: report.finalSignal });
  }
  return stopped;
}
