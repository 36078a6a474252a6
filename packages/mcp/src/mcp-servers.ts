import type { Clock, IdGenerator } from '@demiurge/contracts';
import type { EventStore } from '@demiurge/event-store';
import type { McpServerSpec } from '@demiurge/slots';
import type { ToolDefinition } from '@demiurge/turn-engine';
import {
  DEFAULT_MCP_BACKOFF,
  type McpBackoff,
  type McpLogger,
  type McpServerLiveStatus,
  McpServerSupervisor,
} from './mcp-server-supervisor.js';
import { stopServersOfGoneHosts } from './mcp-status.js';
import type { McpToolChange } from './mcp-tool-set.js';

export interface McpServersOptions {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  /** This host process. */
  readonly host: string;
  readonly coreId: string;
  /** The core's servers (`AgentCore.mcpServers`). */
  readonly servers: readonly McpServerSpec[];
  readonly logger: McpLogger;
  /** Whether the host that started a server is still alive (servers of a gone host are recorded stopped). */
  readonly isHostAlive: (host: string) => boolean;
  readonly backoff?: Partial<McpBackoff>;
}

/**
 * The MCP tool servers of one host: `start` records the servers a gone host left running as stopped, then
 * starts every server of the core (in parallel; each first attempt awaited, a failed one restarting in the
 * background) and hands their tools out namespaced by server; servers that come up later, list new tools on a
 * restart, or change their tools (`tools/list_changed`) hand the change out through `onToolsChanged`. `close`
 * stops them all.
 *
 * @example
 * ```ts
 * const mcp = new McpServers({ store, clock, ids, host, coreId: core.id, servers: core.mcpServers, logger, isHostAlive });
 * mcp.onToolsChanged(({ added, removed }) => {
 *   removed.forEach((name) => registry.unregister(name));
 *   added.forEach((t) => registry.register(t));
 * });
 * await mcp.start();
 * ```
 */
export class McpServers {
  private readonly supervisors: McpServerSupervisor[];
  private readonly listeners: ((change: McpToolChange) => void)[] = [];

  constructor(private readonly options: McpServersOptions) {
    const backoff = { ...DEFAULT_MCP_BACKOFF, ...options.backoff };
    this.supervisors = options.servers.map(
      (spec) =>
        new McpServerSupervisor({
          store: options.store,
          clock: options.clock,
          ids: options.ids,
          host: options.host,
          coreId: options.coreId,
          spec,
          logger: options.logger,
          backoff,
          onToolsChanged: (change) => {
            for (const listener of this.listeners) listener(change);
          },
        }),
    );
  }

  /**
   * Called with the tools each server lists for the first time (at its first successful start, or later), and
   * with what a server's `tools/list_changed` changed (tools added, names removed).
   */
  onToolsChanged(listener: (change: McpToolChange) => void): void {
    this.listeners.push(listener);
  }

  async start(): Promise<void> {
    if (this.supervisors.length === 0) return;
    await stopServersOfGoneHosts(this.options.store, this.options.isHostAlive, this.options.host);
    await Promise.all(this.supervisors.map((s) => s.start()));
  }

  /** Every tool listed so far, namespaced `<server>__<tool>`. */
  tools(): ToolDefinition[] {
    return this.supervisors.flatMap((s) => s.tools());
  }

  /** Each server as this host runs it now. */
  status(): McpServerLiveStatus[] {
    return this.supervisors.map((s) => s.status());
  }

  async close(reason?: string): Promise<void> {
    await Promise.all(this.supervisors.map((s) => s.close(reason)));
  }
}
