import { defineTool, type ToolDefinition, type ToolResult } from '@demiurge/turn-engine';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/** The separator between a server's name and its tool's in the names the model sees: `fs__read_file`. */
export const MCP_NAMESPACE_SEPARATOR = '__';

/** The longest tool name a model API accepts. */
const MAX_TOOL_NAME = 64;

/** The name the model sees for `tool` of `server`, or undefined when it cannot be made a plain tool name. */
export function namespacedToolName(server: string, tool: string): string | undefined {
  const name = `${server}${MCP_NAMESPACE_SEPARATOR}${tool.replace(/[^a-zA-Z0-9_-]/g, '_')}`;
  return name.length <= MAX_TOOL_NAME && tool.length > 0 ? name : undefined;
}

/** Whether the server annotated the tool read-only: only then may plan mode run it without an approval. */
export const isReadOnly = (tool: Tool): boolean => tool.annotations?.readOnlyHint === true;

/**
 * A tool of an MCP server as the engine runs it: named `<server>__<tool>`, shown with the server's JSON Schema,
 * effect `read` when annotated `readOnlyHint: true` and `mcp.write` otherwise (plan mode denies it unless that
 * exact call is approved); idempotent when read-only or annotated `idempotentHint: true`. `call` reaches the
 * server (whichever connection is live when the call runs).
 */
export function mcpToolDefinition(
  server: string,
  tool: Tool,
  call: (args: Record<string, unknown>, signal: AbortSignal) => Promise<ToolResult>,
): ToolDefinition | undefined {
  const name = namespacedToolName(server, tool.name);
  if (!name) return undefined;
  const readOnly = isReadOnly(tool);
  const about = tool.description ?? tool.title ?? tool.annotations?.title ?? tool.name;
  return defineTool({
    name,
    description: `${about}\n(MCP server "${server}", tool "${tool.name}"${readOnly ? ', read-only' : ''})`,
    input: z.looseObject({}),
    parameters: tool.inputSchema,
    effect: readOnly ? 'read' : 'mcp.write',
    idempotent: readOnly || tool.annotations?.idempotentHint === true,
    run: (input, ctx) => call(input, ctx.signal),
  });
}
