import type { EventData, ToolCallProcessStarted } from '@demiurge/contracts';
import type { EventStore } from '@demiurge/event-store';
import { RunsCollections, runsProjector, type ToolCallView } from '@demiurge/projector-runs';
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
 * or `unknown` after a recovery). A group is only signalled once its start marker (or the spawn-id tag of a
 * member) proves it is that very process tree — a reused pid is never touched. A call whose host recorded an
 * outcome needs nothing: the foreground runner returns only once the whole group is gone.
 */
export async function stopOrphanedToolProcesses(
  store: EventStore,
  options: { isHostAlive: (host: string) => boolean; graceMs: number },
): Promise<StoppedOrphan[]> {
  const boot = currentBootId();
  if (boot === undefined) return []; // no start markers to check on this platform: never signal blind
  const reader = store.projection(runsProjector.name);
  const stopped: StoppedOrphan[] = [];
  for (const event of await store.readAll({ types: ['tool_call.process_started'] })) {
    const p = event.data as EventData<typeof ToolCallProcessStarted>;
    if (parseStartMarker(p.startMarker)?.bootId !== boot || options.isHostAlive(p.host)) continue;
    const call = await reader.get<ToolCallView>(RunsCollections.toolCalls, p.toolCallId);
    if (call && call.status !== 'started' && call.status !== 'unknown') continue;
    const report = await stopTree(
      { spawnId: p.spawnId, host: p.host, pid: p.pid, pgid: p.pgid, platform: p.platform, startMarker: p.startMarker },
      { graceMs: options.graceMs, kill: (pid, signal) => process.kill(pid, signal) },
    );
    if (report.signalled)
      stopped.push({ toolCallId: p.toolCallId, host: p.host, pid: p.pid, finalSignal: report.finalSignal });
  }
  return stopped;
}
