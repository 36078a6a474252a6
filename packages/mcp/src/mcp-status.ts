import { isEvent, type RecordedEvent } from '@demiurge/contracts';
import type { EventStore } from '@demiurge/event-store';
import { type McpServerState, mcpServerLifecycle } from '@demiurge/lifecycle';

/** One MCP server as the log says its latest host ran it (what `demiurge status` shows). */
export interface McpServerStatus {
  readonly server: string;
  readonly mcpServerId: string;
  readonly coreId: string;
  readonly host: string;
  readonly transport: string;
  readonly target: string;
  readonly state: McpServerState;
  /** Starts so far (1 is the first; more are restarts after crashes). */
  readonly attempts: number;
  readonly crashes: number;
  readonly tools: number;
  /** The latest crash's (or the failure's, or the stop's) reason. */
  readonly lastReason: string | null;
  readonly since: string;
}

/** The event types of MCP servers, for reads by type. */
export const MCP_SERVER_EVENT_TYPES: readonly string[] = mcpServerLifecycle.events;

function fold(events: readonly RecordedEvent[]): Map<string, McpServerStatus> {
  const byStream = new Map<string, McpServerStatus>();
  for (const event of events) {
    const prev = byStream.get(event.streamId);
    if (isEvent(event, 'mcp.server_starting')) {
      const { data } = event;
      byStream.set(event.streamId, {
        server: data.server,
        mcpServerId: event.streamId,
        coreId: data.coreId,
        host: data.host,
        transport: data.transport,
        target: data.target,
        state: 'starting',
        attempts: 0,
        crashes: 0,
        tools: 0,
        lastReason: null,
        since: event.recordedAt,
      });
      continue;
    }
    if (!prev) continue;
    const state = mcpServerLifecycle.evolve(prev.state, event, event.streamId);
    const next = { ...prev, state, since: event.recordedAt };
    if (isEvent(event, 'mcp.server_started')) {
      next.attempts = event.data.attempt;
      next.tools = event.data.tools.length;
    } else if (isEvent(event, 'mcp.server_crashed')) {
      next.crashes = prev.crashes + 1;
      next.lastReason = event.data.reason;
    } else if (isEvent(event, 'mcp.server_failed', 'mcp.server_stopped')) {
      next.lastReason = event.data.reason;
    }
    byStream.set(event.streamId, next);
  }
  return byStream;
}

/**
 * The MCP servers of the log, the latest stream of each server name (the host that started it last), read by
 * event type (an index serves it; a home without MCP servers reads nothing).
 * @example
 * for (const s of await mcpServerStatus(store)) console.log(s.server, s.state, s.crashes);
 */
export async function mcpServerStatus(store: EventStore): Promise<McpServerStatus[]> {
  const streams = fold(await store.readAll({ types: MCP_SERVER_EVENT_TYPES }));
  const latest = new Map<string, McpServerStatus>();
  for (const status of streams.values()) latest.set(status.server, status);
  return [...latest.values()].sort((a, b) => (a.server < b.server ? -1 : 1));
}

/**
 * Records `mcp.server_stopped` for the servers left starting, running or restarting by a host that is gone
 * (killed): their processes died with it. Servers of live hosts (and of `self`) are left alone.
 */
export async function stopServersOfGoneHosts(
  store: EventStore,
  isHostAlive: (host: string) => boolean,
  self: string,
): Promise<void> {
  const streams = fold(await store.readAll({ types: MCP_SERVER_EVENT_TYPES }));
  for (const s of streams.values()) {
    if (s.state === 'stopped' || s.state === 'failed' || s.host === self || isHostAlive(s.host)) continue;
    const version = await store.streamVersion(s.mcpServerId);
    await store
      .append(
        {
          streamType: mcpServerLifecycle.streamType,
          streamId: s.mcpServerId,
          expectedVersion: version,
          events: [
            {
              type: 'mcp.server_stopped',
              data: { mcpServerId: s.mcpServerId, reason: `its host ${s.host} is gone (found at a host start)` },
            },
          ],
        },
        { meta: { actor: { kind: 'system', id: 'mcp' } } },
      )
      .catch(() => undefined); // another host recorded it first
  }
}
