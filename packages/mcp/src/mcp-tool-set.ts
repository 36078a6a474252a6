import type { McpToolListing } from '@demiurge/contracts';
import type { ToolDefinition, ToolResult } from '@demiurge/turn-engine';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { isReadOnly, mcpToolDefinition } from './mcp-tools.js';

/** What a listing changed: the definitions to offer, the names (`<server>__<tool>`) no longer offered. */
export interface McpToolChange {
  readonly added: readonly ToolDefinition[];
  readonly removed: readonly string[];
}

/**
 * The tool definitions of one MCP server under one host, by the server's tool names. A restart's listing only
 * adds (a tool keeps its definition across restarts: the registry holds it); a `tools/list_changed` listing
 * replaces the set: tools gone are removed, a tool whose read-only annotation changed gets a new definition
 * (its effect class changed).
 */
export class McpToolSet {
  private readonly defined = new Map<string, ToolDefinition>();

  constructor(
    private readonly server: string,
    private readonly call: (
      tool: string,
      qualified: string,
      args: Record<string, unknown>,
      signal: AbortSignal,
    ) => Promise<ToolResult>,
    private readonly warn: (message: string) => void,
  ) {}

  /** Every tool defined so far. */
  definitions(): ToolDefinition[] {
    return [...this.defined.values()];
  }

  /**
   * The listing of `tools` and what it changes. `replace`: tools defined before and missing from `tools` are
   * removed (a list change); otherwise they are kept (a restart).
   */
  apply(tools: readonly Tool[], replace: boolean): { listing: McpToolListing[]; change: McpToolChange } {
    const added: ToolDefinition[] = [];
    const removed: string[] = [];
    const listing: McpToolListing[] = [];
    const seen = new Set<string>();
    for (const tool of tools) {
      const readOnly = isReadOnly(tool);
      let definition = this.defined.get(tool.name);
      if (definition && replace && (definition.effect === 'read') !== readOnly) {
        removed.push(definition.name);
        definition = undefined;
      }
      if (!definition) {
        const made = mcpToolDefinition(this.server, tool, (args, signal) =>
          this.call(tool.name, made?.name ?? tool.name, args, signal),
        );
        if (!made) {
          this.warn(`MCP server ${this.server}: tool "${tool.name}" has no usable name; it is not offered`);
          continue;
        }
        definition = made;
        this.defined.set(tool.name, definition);
        added.push(definition);
      }
      seen.add(tool.name);
      listing.push({ name: definition.name, tool: tool.name, readOnly });
    }
    if (replace) {
      for (const [tool, definition] of [...this.defined]) {
        if (seen.has(tool)) continue;
        this.defined.delete(tool);
        removed.push(definition.name);
      }
    }
    return { listing, change: { added, removed } };
  }
}
