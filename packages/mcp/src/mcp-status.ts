import type { EventStore } from '@demiurge/event-store';
import { mcpServerLifecycle } from '@demiurge/lifecycle';
import { type McpServerStatus, mcpServersReader } from '@demiurge/projector-mcp-servers';

export type { McpServerStatus } from '@demiurge/projector-mcp-servers';

/** The event types of MCP servers, for reads by type. */
export const MCP_SERVER_EVENT_TYPES: readonly string[] = mcpServerLifecycle.events;

/**
 * The MCP servers of the log, the latest stream of each server name (the host that started it last), from the
 * `mcp-servers` read model (one document per name, however many host starts the log holds).
 * @example
 * for (const s of await mcpServerStatus(store)) console.log(s.server, s.state, s.crashes);
 */
export async function mcpServerStatus(store: EventStore): Promise<McpServerStatus[]> {
  return mcpServersReader(store).latest();
}

/**
 * Records `mcp.server_stopped` for the servers left starting, running or restarting by a host that is gone
 * (killed): their processes died with it. Servers of live hosts (and of `self`) are left alone. Reads only the
 * servers not ended (the `mcp-servers` read model's `open`).
 */
export async function stopServersOfGoneHosts(
  store: EventStore,
  isHostAlive: (host: string) => boolean,
  self: string,
): Promise<void> {
  for (const s of await mcpServersReader(store).open()) {
    if (s.host === self || isHostAlive(s.host)) continue;
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
