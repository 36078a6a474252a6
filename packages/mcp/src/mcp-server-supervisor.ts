import {
  backoffMs,
  type Clock,
  type IdGenerator,
  IdPrefix,
  type McpToolListing,
  type NewEvent,
} from '@demiurge/contracts';
import type { EventStore } from '@demiurge/event-store';
import { checkEvents, type McpServerEventType, type McpServerState, mcpServerLifecycle } from '@demiurge/lifecycle';
import type { McpServerSpec } from '@demiurge/slots';
import { type ToolDefinition, ToolOutcomeUnknownError, type ToolResult } from '@demiurge/turn-engine';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { McpServerUnavailableError, McpToolError } from './errors.js';
import { connectMcpServer, describeTarget, type McpConnection } from './mcp-connection.js';
import { resultText } from './mcp-result.js';
import { type McpToolChange, McpToolSet } from './mcp-tool-set.js';

/** Where the MCP runtime reports what no caller waits for (a crash, a restart, a failed write). */
export interface McpLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Restart delays: `baseMs`, doubled per restart in a row, at most `maxMs`. */
export interface McpBackoff {
  readonly baseMs: number;
  readonly maxMs: number;
  /** A server that stayed up this long starts its restart count (and delay) afresh. */
  readonly stableMs: number;
}

/** How long a call waits for its restarting server before it fails (nothing sent). */
export const MCP_RESTART_WAIT_MS = 60_000;

export const DEFAULT_MCP_BACKOFF: McpBackoff = { baseMs: 500, maxMs: 30_000, stableMs: 5 * 60_000 };

export interface McpServerSupervisorOptions {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  /** This host process: the owner of the server (recorded on `mcp.server_starting`). */
  readonly host: string;
  readonly coreId: string;
  readonly spec: McpServerSpec;
  readonly logger: McpLogger;
  readonly backoff: McpBackoff;
  /**
   * Told about tools listed for the first time (at the first start, or new in a restart's listing) and about a
   * changed listing (`tools/list_changed`: added and removed tools).
   */
  readonly onToolsChanged: (change: McpToolChange) => void;
}

/** One server as `status` shows it (live, from the process running it). */
export interface McpServerLiveStatus {
  readonly server: string;
  readonly mcpServerId: string;
  readonly state: McpServerState;
  readonly transport: 'stdio' | 'http';
  readonly target: string;
  readonly pid: number | null;
  readonly attempt: number;
  readonly tools: readonly McpToolListing[];
  readonly lastError: string | null;
}

const SYSTEM_ACTOR = { kind: 'system', id: 'mcp' } as const;

/**
 * Keeps one MCP server of the core up for one host: records `mcp.server_starting`, connects and records
 * `mcp.server_started` with the tool listing; when the server exits (or a start fails) records
 * `mcp.server_crashed` and restarts it after a backoff, until its restarts are used up (`mcp.server_failed`);
 * `close` stops it (`mcp.server_stopped`). Every event is checked by the MCP server machine before it is
 * appended. Calls go to whichever connection is live; a call the server's crash cut short is unknown.
 */
export class McpServerSupervisor {
  readonly mcpServerId: string;
  private state: McpServerState = 'none';
  private version = 0;
  private attempt = 0;
  private restartsInRow = 0;
  private upSince = 0;
  private connection: McpConnection | undefined;
  private pid: number | undefined;
  private listing: McpToolListing[] = [];
  private lastError: string | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private writes: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly toolSet: McpToolSet;
  private relisting: Promise<void> = Promise.resolve();
  /** Calls waiting for a restart to finish (or to be given up). */
  private waiters: (() => void)[] = [];

  constructor(private readonly options: McpServerSupervisorOptions) {
    this.mcpServerId = options.ids.next(IdPrefix.mcpServer);
    this.toolSet = new McpToolSet(
      options.spec.name,
      (tool, qualified, args, signal) => this.call(tool, qualified, args, signal),
      (message) => options.logger.warn(message),
    );
  }

  get name(): string {
    return this.options.spec.name;
  }

  /** The tools offered so far (listed by this server under this host, less those a list change removed). */
  tools(): ToolDefinition[] {
    return this.toolSet.definitions();
  }

  status(): McpServerLiveStatus {
    const { spec } = this.options;
    return {
      server: spec.name,
      mcpServerId: this.mcpServerId,
      state: this.state,
      transport: spec.transport,
      target: describeTarget(spec),
      pid: this.connection ? (this.pid ?? null) : null,
      attempt: this.attempt,
      tools: this.listing,
      lastError: this.lastError ?? null,
    };
  }

  /** Records the start and makes the first attempt (a failed one schedules a restart; it never throws). */
  async start(): Promise<void> {
    const { spec, coreId, host } = this.options;
    await this.record([
      {
        type: 'mcp.server_starting',
        data: {
          mcpServerId: this.mcpServerId,
          server: spec.name,
          coreId,
          host,
          transport: spec.transport,
          target: describeTarget(spec),
        },
      },
    ]);
    await this.attemptStart();
  }

  /** Stops restarting, closes the connection and records the stop. Idempotent. */
  async close(reason = 'the host closed'): Promise<void> {
    if (this.closed) return this.writes;
    this.closed = true;
    clearTimeout(this.restartTimer);
    this.wake();
    const connection = this.connection;
    this.connection = undefined;
    await connection?.close();
    if (this.state === 'starting' || this.state === 'running' || this.state === 'restarting') {
      await this.record([{ type: 'mcp.server_stopped', data: { mcpServerId: this.mcpServerId, reason } }]);
    }
    await this.writes;
  }

  /**
   * Calls `tool` on the live connection (see {@link McpServerSupervisor}); while the server is restarting, the
   * call waits for it to be back (nothing was sent yet), and fails without sending if it is given up or stopped.
   */
  async call(tool: string, qualified: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult> {
    if (!this.connection && !this.closed && this.state !== 'failed' && !signal.aborted) {
      await this.whileRestarting(signal);
    }
    const connection = this.connection;
    if (!connection) throw this.unavailable();
    let result: Awaited<ReturnType<McpConnection['callTool']>>;
    try {
      result = await connection.callTool(tool, args, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed) {
        throw new ToolOutcomeUnknownError(
          qualified,
          `the MCP server ${this.name} went away while the call ran (${this.lastError ?? 'its connection closed'})`,
          { cause: err },
        );
      }
      if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
        throw new ToolOutcomeUnknownError(qualified, `the MCP server ${this.name} did not answer in time`, {
          cause: err,
        });
      }
      if (err instanceof McpError) throw new McpToolError(qualified, err.message, { cause: err });
      // Anything else (an HTTP server that stopped answering mid-request): the server may have acted.
      const reason = (err as Error).message || String(err);
      if (this.options.spec.transport === 'http' && this.connection === connection) this.lost(connection, reason);
      throw new ToolOutcomeUnknownError(qualified, `the call to the MCP server ${this.name} broke off: ${reason}`, {
        cause: err,
      });
    }
    const text = resultText(result);
    if (result.isError) throw new McpToolError(qualified, text || `${qualified} failed (the server gave no text)`);
    return { output: text };
  }

  /** Resolves when the server is up again, given up or stopped, the call is cancelled, or after a minute. */
  private whileRestarting(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.waiters = this.waiters.filter((w) => w !== done);
        resolve();
      };
      const timer = setTimeout(done, MCP_RESTART_WAIT_MS);
      timer.unref?.();
      signal.addEventListener('abort', done, { once: true });
      this.waiters.push(done);
    });
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  private unavailable(): McpServerUnavailableError {
    const why = this.lastError ? `: ${this.lastError}` : '';
    const message =
      this.state === 'failed'
        ? `the MCP server ${this.name} is down and its restarts are used up${why}; nothing was sent. Carry on without its tools, or ask the operator to restart the host`
        : this.state === 'stopped' || this.closed
          ? `the MCP server ${this.name} is stopped (the host is closing); nothing was sent`
          : `the MCP server ${this.name} is restarting${why}; nothing was sent. Try the call again in a few seconds`;
    return new McpServerUnavailableError(this.name, this.state, message);
  }

  private async attemptStart(): Promise<void> {
    if (this.closed) return;
    this.attempt++;
    let connection: McpConnection;
    try {
      connection = await connectMcpServer(this.options.spec);
    } catch (err) {
      await this.crashed((err as Error).message);
      return;
    }
    if (this.closed) {
      await connection.close();
      return;
    }
    const { listing, change } = this.toolSet.apply(connection.tools, false);
    this.connection = connection;
    this.pid = connection.pid;
    this.listing = listing;
    this.upSince = this.options.clock.now();
    await this.record([
      {
        type: 'mcp.server_started',
        data: {
          mcpServerId: this.mcpServerId,
          attempt: this.attempt,
          ...(connection.pid ? { pid: connection.pid } : {}),
          tools: listing,
        },
      },
    ]);
    this.options.logger.info(`MCP server ${this.name} started with ${listing.length} tools`, {
      server: this.name,
      attempt: this.attempt,
    });
    connection.onLost((reason) => this.lost(connection, reason));
    connection.onToolsChanged(() => void this.relist(connection));
    this.offer(change);
    this.wake();
  }

  private offer(change: McpToolChange): void {
    if (change.added.length === 0 && change.removed.length === 0) return;
    try {
      this.options.onToolsChanged(change);
    } catch (err) {
      this.options.logger.error(`MCP server ${this.name}: its tools could not be offered: ${(err as Error).message}`, {
        server: this.name,
        error: err,
      });
    }
  }

  /**
   * The server said its tools changed (`notifications/tools/list_changed`): lists them again (one listing at a
   * time), records `mcp.tools_changed` when the listing differs, and offers the new set (turns admitted from now
   * on see it). A listing that fails is logged; the tools stay as they were.
   */
  private relist(connection: McpConnection): Promise<void> {
    this.relisting = this.relisting.then(async () => {
      if (this.connection !== connection || this.closed) return;
      let tools: Awaited<ReturnType<McpConnection['listTools']>>;
      try {
        tools = await connection.listTools();
      } catch (err) {
        this.options.logger.warn(
          `MCP server ${this.name}: its changed tools could not be listed: ${(err as Error).message}`,
          {
            server: this.name,
          },
        );
        return;
      }
      if (this.connection !== connection || this.closed) return;
      const { listing, change } = this.toolSet.apply(tools, true);
      if (JSON.stringify(listing) === JSON.stringify(this.listing)) return;
      this.listing = listing;
      await this.record([
        {
          type: 'mcp.tools_changed',
          data: {
            mcpServerId: this.mcpServerId,
            tools: listing,
            added: change.added.map((t) => t.name),
            removed: [...change.removed],
          },
        },
      ]);
      this.options.logger.info(`MCP server ${this.name} changed its tools: ${listing.length} now`, {
        server: this.name,
        added: change.added.map((t) => t.name),
        removed: change.removed,
      });
      this.offer(change);
    });
    return this.relisting;
  }

  private lost(connection: McpConnection, reason: string): void {
    if (this.connection !== connection) return;
    this.connection = undefined;
    void connection.close();
    void this.crashed(reason);
  }

  /** A crash or a failed start: the restart after a backoff, or the end when the restarts are used up. */
  private async crashed(reason: string): Promise<void> {
    if (this.closed) return;
    const { spec, backoff, clock, logger } = this.options;
    this.lastError = reason;
    if (this.upSince > 0 && clock.now() - this.upSince >= backoff.stableMs) this.restartsInRow = 0;
    this.upSince = 0;
    if (this.restartsInRow >= spec.maxRestarts) {
      logger.error(`MCP server ${this.name} is down and its ${spec.maxRestarts} restarts are used up: ${reason}`, {
        server: this.name,
      });
      await this.record([
        { type: 'mcp.server_failed', data: { mcpServerId: this.mcpServerId, reason, attempts: this.attempt } },
      ]);
      this.wake();
      return;
    }
    this.restartsInRow++;
    const delay = backoffMs(this.restartsInRow, { baseMs: backoff.baseMs, maxMs: backoff.maxMs, jitter: 'none' });
    logger.warn(`MCP server ${this.name} crashed (${reason}); restarting in ${delay} ms`, { server: this.name });
    await this.record([
      {
        type: 'mcp.server_crashed',
        data: { mcpServerId: this.mcpServerId, reason, nextAttempt: this.attempt + 1, restartInMs: delay },
      },
    ]);
    if (this.closed) return;
    this.restartTimer = setTimeout(() => void this.attemptStart(), delay);
    this.restartTimer.unref?.();
  }

  /** Appends events to this server's stream, checked by its machine, one write at a time. */
  private record(events: NewEvent<McpServerEventType>[]): Promise<void> {
    this.writes = this.writes.then(async () => {
      // Never rejects: a refused transition or a failed append (a closed or damaged store) is logged, and the
      // server's recorded state stays what the log says.
      try {
        const checked = checkEvents(mcpServerLifecycle, this.state, events, this.mcpServerId);
        if (checked.length === 0) return;
        await this.options.store.append(
          {
            streamType: mcpServerLifecycle.streamType,
            streamId: this.mcpServerId,
            expectedVersion: this.version === 0 ? 'no_stream' : this.version,
            events: checked,
          },
          { meta: { actor: SYSTEM_ACTOR } },
        );
        this.version += checked.length;
        this.state = checked.reduce((s, e) => mcpServerLifecycle.evolve(s, e, this.mcpServerId), this.state);
      } catch (err) {
        this.options.logger.error(
          `MCP server ${this.name}: could not record ${events.map((e) => e.type).join(', ')}: ${(err as Error).message}`,
          { server: this.name, error: err },
        );
      }
    });
    return this.writes;
  }
}
