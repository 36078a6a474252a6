import type { ToolSpec } from '@demiurge/providers';
import { z } from 'zod';
import type { ToolDefinition } from './tool.js';

/** The tools a turn can use, by name; each is shown to the model with its input as JSON Schema. */
export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition>();

  constructor(tools: readonly ToolDefinition[] = []) {
    for (const tool of tools) this.register(tool);
  }

  register(tool: ToolDefinition): this {
    if (!/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name))
      throw new Error(`tool name ${JSON.stringify(tool.name)} is not a plain name`);
    if (this.tools.has(tool.name)) throw new Error(`tool ${tool.name} is registered twice`);
    this.tools.set(tool.name, tool);
    return this;
  }

  /** Removes a tool (an MCP server stopped listing it); true when it was registered. */
  unregister(name: string): boolean {
    return this.tools.delete(name);
  }

  get(name: string): ToolDefinition | undefined {
    return this.tools.get(name);
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  /** A registry with only the named tools (a delegation's tool selection), in this registry's order. */
  select(names: readonly string[] | 'all'): ToolRegistry {
    if (names === 'all') return new ToolRegistry([...this.tools.values()]);
    const unknown = names.filter((n) => !this.tools.has(n));
    if (unknown.length > 0) throw new Error(`unknown tools ${unknown.join(', ')}; known: ${this.names().join(', ')}`);
    return new ToolRegistry([...this.tools.values()].filter((t) => names.includes(t.name)));
  }

  /** What the model is told: every tool stays visible, plan mode or not (a denial explains itself). */
  specs(): ToolSpec[] {
    return [...this.tools.values()].map((tool) => ({
      name: tool.name,
      description: tool.description,
      parameters: { ...(tool.parameters ?? z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' })) },
    }));
  }
}
