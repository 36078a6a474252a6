import { isEvent, mcpServerEvents, type RecordedEvent } from '@demiurge/contracts';
import { defineProjector, type ProjectionTx } from '@demiurge/event-store';
import { type McpServerState, mcpServerLifecycle } from '@demiurge/lifecycle';

/** One MCP server as the log says one host ran it (what `demiurge status` and the gateway's status show). */
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
  /** The tools of its latest listing (a start, or a `tools/list_changed`). */
  readonly tools: number;
  /** The latest crash's (or the failure's, or the stop's) reason. */
  readonly lastReason: string | null;
  readonly since: string;
}

/** Collections of the `mcp-servers` projector. */
export const McpServersCollections = {
  /** `mcs_...` → {@link McpServerStatus}: every server stream. */
  servers: 'servers',
  /** The server's name → {@link McpServerStatus} of its latest stream (the host that started it last). */
  latest: 'latest',
  /** `mcs_...` → {@link McpServerStatus} while it is starting, running or restarting (not ended). */
  open: 'open',
} as const;

const ENDED: ReadonlySet<McpServerState> = new Set(['stopped', 'failed']);

function next(prev: McpServerStatus | undefined, event: RecordedEvent): McpServerStatus | undefined {
  if (isEvent(event, 'mcp.server_starting')) {
    const { data } = event;
    return {
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
    };
  }
  if (!prev) return undefined;
  const status = {
    ...prev,
    state: mcpServerLifecycle.evolve(prev.state, event, event.streamId),
    since: event.recordedAt,
  };
  if (isEvent(event, 'mcp.server_started')) {
    status.attempts = event.data.attempt;
    status.tools = event.data.tools.length;
  } else if (isEvent(event, 'mcp.tools_changed')) {
    status.tools = event.data.tools.length;
  } else if (isEvent(event, 'mcp.server_crashed')) {
    status.crashes = prev.crashes + 1;
    status.lastReason = event.data.reason;
  } else if (isEvent(event, 'mcp.server_failed', 'mcp.server_stopped')) {
    status.lastReason = event.data.reason;
  }
  return status;
}

function put(tx: ProjectionTx, status: McpServerStatus): void {
  const { servers, latest, open } = McpServersCollections;
  tx.put(servers, status.mcpServerId, status);
  const newest = tx.get<McpServerStatus>(latest, status.server);
  if (!newest || newest.mcpServerId === status.mcpServerId || status.state === 'starting') {
    tx.put(latest, status.server, status);
  }
  if (ENDED.has(status.state)) tx.delete(open, status.mcpServerId);
  else tx.put(open, status.mcpServerId, status);
}

/**
 * The MCP servers of the log (`mcp_server` streams), folded with the MCP server machine: every stream, the
 * latest stream of each server name, and the streams not ended. What a status reads is one document per
 * server name, however many hosts started them; a host start reads only the servers still open.
 */
export const mcpServersProjector = defineProjector({
  name: 'mcp-servers',
  version: 1,
  handles: mcpServerEvents.map((e) => e.type),
  apply(event, tx) {
    const prev = tx.get<McpServerStatus>(McpServersCollections.servers, event.streamId);
    const status = next(prev, event);
    if (status) put(tx, status);
  },
});
