import type { ProjectionSource } from '@demiurge/event-store';
import { type McpServerStatus, McpServersCollections, mcpServersProjector } from './mcp-servers.projector.js';

/** The `mcp-servers` read model, typed. */
export interface McpServersReader {
  /** The latest stream of each server name (the host that started it last), by name. */
  latest(): Promise<McpServerStatus[]>;
  /** The server streams not ended (starting, running, restarting), of any host. */
  open(): Promise<McpServerStatus[]>;
  /** One server stream. */
  get(mcpServerId: string): Promise<McpServerStatus | undefined>;
}

/**
 * The typed reader of the `mcp-servers` projection.
 * @example
 * for (const s of await mcpServersReader(store).latest()) console.log(s.server, s.state, s.tools);
 */
export function mcpServersReader(store: ProjectionSource): McpServersReader {
  const reader = store.projection(mcpServersProjector.name);
  return {
    latest: () => reader.list<McpServerStatus>(McpServersCollections.latest),
    open: () => reader.list<McpServerStatus>(McpServersCollections.open),
    get: (mcpServerId) => reader.get<McpServerStatus>(McpServersCollections.servers, mcpServerId),
  };
}
