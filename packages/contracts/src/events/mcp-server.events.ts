import { z } from 'zod';
import { IdPrefix, prefixedId } from '../ids.js';
import { defineEvent } from '../registry.js';

/** One MCP server as one host runs it, from its first start to its stop: `mcs_...`. */
export const McpServerId = prefixedId(IdPrefix.mcpServer);
export type McpServerId = z.infer<typeof McpServerId>;

/** How the host reaches an MCP server: a child process on stdio, or a streamable HTTP endpoint. */
export const McpTransport = z.enum(['stdio', 'http']);
export type McpTransport = z.infer<typeof McpTransport>;

/** One tool a server listed: the name offered to the model (`<server>__<tool>`), the server's name, its effect. */
export const McpToolListing = z.object({
  name: z.string().min(1),
  tool: z.string().min(1),
  /** The tool is annotated `readOnlyHint: true` (effect `read`); otherwise it is write-shaped (`mcp.write`). */
  readOnly: z.boolean(),
});
export type McpToolListing = z.infer<typeof McpToolListing>;

export const McpServerStarting = defineEvent({
  type: 'mcp.server_starting',
  schemaVersion: 1,
  description:
    "A host starts an MCP server its Agent Core lists (`mcp.yaml`): the server's name, the core, the host, the " +
    'transport and its target (the command line or the URL; environment values are never recorded).',
  data: () =>
    z.object({
      mcpServerId: McpServerId,
      server: z.string().min(1),
      coreId: z.string().min(1),
      host: z.string().min(1),
      transport: McpTransport,
      target: z.string().min(1),
    }),
});

export const McpServerStarted = defineEvent({
  type: 'mcp.server_started',
  schemaVersion: 1,
  description:
    'The MCP server answered the handshake and listed its tools (attempt 1 is the first start, later ones restarts); ' +
    'its tools are offered to the model namespaced by server.',
  data: () =>
    z.object({
      mcpServerId: McpServerId,
      attempt: z.number().int().positive(),
      /** The child process of a stdio server. */
      pid: z.number().int().positive().optional(),
      tools: z.array(McpToolListing),
    }),
});

export const McpServerToolsChanged = defineEvent({
  type: 'mcp.tools_changed',
  schemaVersion: 1,
  description:
    'The running MCP server notified `notifications/tools/list_changed` and the host listed its tools again: the new ' +
    'listing, with the names offered to the model that it added and removed. Turns admitted from now on are offered ' +
    'the new list (a turn keeps the tools pinned at its admission, less the removed ones).',
  data: () =>
    z.object({
      mcpServerId: McpServerId,
      tools: z.array(McpToolListing),
      /** Names offered to the model (`<server>__<tool>`) new in this listing. */
      added: z.array(z.string().min(1)),
      /** Names offered before that this listing no longer has. */
      removed: z.array(z.string().min(1)),
    }),
});

export const McpServerCrashed = defineEvent({
  type: 'mcp.server_crashed',
  schemaVersion: 1,
  description:
    'The MCP server exited or its connection closed (or a start attempt failed); it is restarted after `restartInMs` ' +
    '(backoff). Calls in flight on it are recorded `unknown`, never re-run.',
  data: () =>
    z.object({
      mcpServerId: McpServerId,
      reason: z.string().min(1),
      /** The restart attempt that comes next (2 after the first crash). */
      nextAttempt: z.number().int().positive(),
      restartInMs: z.number().int().nonnegative(),
    }),
});

export const McpServerFailed = defineEvent({
  type: 'mcp.server_failed',
  schemaVersion: 1,
  description:
    'The host gave up restarting the MCP server (its restarts are used up); its tools answer with this reason ' +
    'until the host restarts.',
  data: () => z.object({ mcpServerId: McpServerId, reason: z.string().min(1), attempts: z.number().int().positive() }),
});

export const McpServerStopped = defineEvent({
  type: 'mcp.server_stopped',
  schemaVersion: 1,
  description:
    'The host stopped the MCP server (it closed), or a later host start found the server of a host that is gone.',
  data: () => z.object({ mcpServerId: McpServerId, reason: z.string().min(1) }),
});

export const mcpServerEvents = [
  McpServerStarting,
  McpServerStarted,
  McpServerToolsChanged,
  McpServerCrashed,
  McpServerFailed,
  McpServerStopped,
] as const;
