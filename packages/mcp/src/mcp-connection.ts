import type { McpServerSpec } from '@demiurge/slots';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, type Tool, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

/** The client name and version this host gives MCP servers in the handshake. */
export const MCP_CLIENT_INFO = { name: 'demiurge', version: '0.1.0' } as const;

/** How long one tool call may run before its outcome is given up as unknown (progress resets the clock). */
export const MCP_CALL_TIMEOUT_MS = 10 * 60_000;

/** How an HTTP server's broken stream is retried before the connection counts as lost. */
const HTTP_RECONNECTION = {
  initialReconnectionDelay: 250,
  maxReconnectionDelay: 1_000,
  reconnectionDelayGrowFactor: 2,
  maxRetries: 2,
};
const HTTP_GONE = /Maximum reconnection attempts|Failed to reconnect/;

/** The last lines a stdio server wrote on stderr, kept to explain its crash. */
const STDERR_TAIL_CHARS = 2_000;

/** One live connection to an MCP server: its tools, calls, and one report when it closes on its own. */
export interface McpConnection {
  /** The child process of a stdio server. */
  readonly pid: number | undefined;
  readonly tools: readonly Tool[];
  callTool(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult>;
  /** Lists the server's tools again (every page). */
  listTools(): Promise<Tool[]>;
  /** Called on each `notifications/tools/list_changed` the server sends. */
  onToolsChanged(listener: () => void): void;
  /** Called once when the connection closes without {@link close}: the server exited or went away. */
  onLost(listener: (reason: string) => void): void;
  /** Closes the connection (a stdio server's process is ended); no `onLost` report follows. */
  close(): Promise<void>;
}

/** What a server is, for a person and for `mcp.server_starting` (environment values are never shown). */
export function describeTarget(spec: McpServerSpec): string {
  if (spec.transport === 'http') return spec.url;
  return [spec.command, ...spec.args].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');
}

/**
 * Opens a connection to an MCP server with `@modelcontextprotocol/sdk`: starts a stdio server's process (its
 * `env` added to the SDK's minimal default environment, in its `cwd`) or opens a streamable HTTP session, does
 * the handshake and lists the tools, all within the server's startup timeout. A failure closes what was opened.
 */
export async function connectMcpServer(spec: McpServerSpec): Promise<McpConnection> {
  let stderrTail = '';
  const transport =
    spec.transport === 'stdio'
      ? new StdioClientTransport({
          command: spec.command,
          args: [...spec.args],
          env: { ...getDefaultEnvironment(), ...spec.env },
          cwd: spec.cwd,
          stderr: 'pipe',
        })
      : new StreamableHTTPClientTransport(new URL(spec.url), {
          requestInit: { headers: { ...spec.headers } },
          reconnectionOptions: HTTP_RECONNECTION,
        });
  if (transport instanceof StdioClientTransport) {
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderrTail = (stderrTail + chunk.toString()).slice(-STDERR_TAIL_CHARS);
    });
  }
  const client = new Client(MCP_CLIENT_INFO);
  let closing = false;
  let lost: ((reason: string) => void) | undefined;
  let lostReason: string | undefined;
  const reasonOf = () => {
    const last = stderrTail.trim().split('\n').at(-1)?.trim();
    const what = spec.transport === 'stdio' ? 'its process exited' : 'its connection closed';
    return last ? `${what} (stderr: ${last.slice(0, 300)})` : what;
  };
  client.onclose = () => {
    if (closing || lostReason !== undefined) return;
    lostReason = reasonOf();
    lost?.(lostReason);
  };
  // An HTTP server that went away shows as a stream the SDK cannot reconnect: the connection is lost (calls in
  // flight are answered "connection closed", so their outcome is unknown).
  client.onerror = (error) => {
    if (closing || lostReason !== undefined || !HTTP_GONE.test(error.message)) return;
    lostReason = `its HTTP stream broke off: ${error.message}`;
    lost?.(lostReason);
    void client.close().catch(() => undefined);
  };
  let toolsChanged: (() => void) | undefined;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => toolsChanged?.());
  const listAll = async (signal?: AbortSignal): Promise<Tool[]> => {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {}, {
        timeout: spec.startupTimeoutMs,
        ...(signal ? { signal } : {}),
      });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  };
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), spec.startupTimeoutMs);
  try {
    await client.connect(transport, { timeout: spec.startupTimeoutMs, signal: timeout.signal });
    const tools = await listAll(timeout.signal);
    return {
      pid: transport instanceof StdioClientTransport ? (transport.pid ?? undefined) : undefined,
      tools,
      listTools: () => listAll(),
      onToolsChanged: (listener) => {
        toolsChanged = listener;
      },
      callTool: async (name, args, signal) =>
        (await client.callTool({ name, arguments: args }, undefined, {
          signal,
          timeout: MCP_CALL_TIMEOUT_MS,
          resetTimeoutOnProgress: true,
          onprogress: () => undefined,
        })) as CallToolResult,
      onLost: (listener) => {
        lost = listener;
        if (lostReason !== undefined) listener(lostReason);
      },
      close: async () => {
        closing = true;
        await client.close().catch(() => undefined);
      },
    };
  } catch (err) {
    closing = true;
    await client.close().catch(() => undefined);
    const why = timeout.signal.aborted
      ? `no answer within ${spec.startupTimeoutMs} ms`
      : (err as Error).message || String(err);
    const tail = stderrTail.trim().split('\n').at(-1)?.trim();
    throw new Error(`could not start: ${why}${tail ? ` (stderr: ${tail.slice(0, 300)})` : ''}`, { cause: err });
  } finally {
    clearTimeout(timer);
  }
}
