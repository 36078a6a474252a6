import type { z } from 'zod';

/**
 * What a tool does to the world. Plan mode allows `read` and `plan`; everything else needs an approval
 * for that exact call. `external` covers network and other side effects outside the host.
 */
export type EffectClass = 'read' | 'plan' | 'write.file' | 'shell' | 'git' | 'external' | 'mcp.write' | 'task';

/** What a tool sees when it runs. */
export interface ToolContext {
  /** The real path of the workspace root; file and shell tools never leave it. */
  readonly workspaceRoot: string;
  /** Aborted when the turn or run is cancelled; a tool stops as soon as it can and throws. */
  readonly signal: AbortSignal;
  readonly sessionId: string;
  readonly turnId: string;
  readonly runId: string;
  readonly toolCallId: string;
  /**
   * For a tool that spawns a process group (`shell`): records the group's identity durably. The tool calls it
   * right after the spawn and lets the command run only once it resolved, so a host killed at any moment
   * leaves nothing running that the next host start cannot find (and stop). Absent: nothing is recorded.
   */
  readonly onProcessStarted?: (process: SpawnedProcess) => Promise<void>;
}

/** A spawned process group's identity, as `tool_call.process_started` records it. */
export interface SpawnedProcess {
  /** Carried as `DEMIURGE_SPAWN_ID` in the environment of the group's processes. */
  readonly spawnId: string;
  readonly pid: number;
  readonly pgid: number;
  readonly platform: string;
  /** `linux:<boot id>:<start time>` (the format of @demiurge/workers); undefined where there is none. */
  readonly startMarker: string | undefined;
}

/** What a tool returns: text for the model (kept bounded by the tool) and optional structured data. */
export interface ToolResult {
  readonly output: string;
  readonly data?: unknown;
}

/**
 * A tool: a zod input schema (sent to the model as JSON Schema), its effect class and whether running
 * it twice is harmless. `run` gets input already validated by `input`.
 */
// biome-ignore lint/suspicious/noExplicitAny: a registry holds tools of every input type
export interface ToolDefinition<I = any> {
  readonly name: string;
  readonly description: string;
  readonly input: z.ZodType<I>;
  readonly effect: EffectClass;
  readonly idempotent: boolean;
  /**
   * The JSON Schema the model is shown instead of `input`'s (a tool whose schema comes from elsewhere, such as
   * an MCP server's: `input` then only checks the arguments are an object, the server validates the rest).
   */
  readonly parameters?: Readonly<Record<string, unknown>>;
  /** Optional finer policy: e.g. `shell` reports a read-only command as `read`. Defaults to `effect`. */
  effectOf?(input: I): EffectClass;
  run(input: I, ctx: ToolContext): Promise<ToolResult>;
}

/** Identity helper that keeps the input type of a tool literal. */
export function defineTool<I>(tool: ToolDefinition<I>): ToolDefinition<I> {
  return tool;
}
