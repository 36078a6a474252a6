import type { ProjectionSource } from '@demiurge/event-store';
import type { McpServerStatusEntry } from '@demiurge/operator';
import { mcpServersReader } from '@demiurge/projector-mcp-servers';

/**
 * The MCP servers of the log as the operator protocol shows them (snake_case), the latest stream of each server
 * name from the `mcp-servers` read model: what `demiurge status` shows, for `operator.status`, the session
 * snapshot of the original TUI (an extension field it ignores) and the dashboard's `/api/status`.
 */
export async function mcpStatusEntries(store: ProjectionSource): Promise<McpServerStatusEntry[]> {
  return (await mcpServersReader(store).latest()).map((s) => ({
    server: s.server,
    mcp_server_id: s.mcpServerId,
    state: s.state,
    transport: s.transport,
    target: s.target,
    tools: s.tools,
    attempts: s.attempts,
    crashes: s.crashes,
    last_reason: s.lastReason,
    host: s.host,
    since: s.since,
  }));
}
