import type { MessageVisibility, SlotPhase } from '@demiurge/contracts';

/** The lane a slot runs in: serial slots run in order and may change the main flow; parallel ones may not. */
export type SlotMode = 'serial' | 'parallel';

/** What a failed serial slot does to its turn: `soft` logs and continues, `hard` fails the turn. */
export type FailurePolicy = 'soft' | 'hard';

/** One slot of a loaded core: its manifest (`slot.yaml`) resolved against its folder. */
export interface SlotSpec {
  /** The slot id, also its folder name. */
  readonly id: string;
  readonly phase: SlotPhase;
  readonly mode: SlotMode;
  /** Real path of the slot folder. */
  readonly dir: string;
  /** Path of its `slot.yaml`. */
  readonly manifestPath: string;
  /** Real path of the module (inside the core directory). */
  readonly entrypoint: string;
  readonly description: string;
  readonly timeoutSeconds: number;
  readonly failurePolicy: FailurePolicy;
  /** The visibility of the messages the slot writes (sends and history-writing context). */
  readonly historyPolicy: MessageVisibility;
  readonly capabilities: readonly string[];
}

/** The slot ids of each phase and lane, in order (`pipelines.yaml`). */
export interface Pipelines {
  readonly bootstrap: { readonly serial: readonly string[] };
  readonly input: { readonly serial: readonly string[]; readonly parallel: readonly string[] };
  readonly output: { readonly serial: readonly string[]; readonly parallel: readonly string[] };
}

export interface CoreLimits {
  /** Model rounds per turn. */
  readonly stepBudget: number;
  /** How deep delegated child cores may nest. */
  readonly maxDelegationDepth: number;
}

/**
 * A loaded Agent Core (seed 003): `agent.yaml`, `pipelines.yaml` and the manifests of every slot the
 * pipelines list. Modules are imported when a slot first runs.
 */
export interface AgentCore {
  /** Real path of the core directory. */
  readonly dir: string;
  readonly id: string;
  readonly name: string;
  readonly description: string;
  /** The model provider (`fake` by default) and model, for the host to build its provider from. */
  readonly provider: string;
  readonly model: string | undefined;
  /** The core's system prompt text. */
  readonly instructions: string;
  readonly limits: CoreLimits;
  readonly pipelines: Pipelines;
  /** Every slot the pipelines list, by id. */
  readonly slots: ReadonlyMap<string, SlotSpec>;
  /** The MCP tool servers of `mcp.yaml`, in file order (none without the file). */
  readonly mcpServers: readonly McpServerSpec[];
  /** A sha-256 over the core's YAML files and slot modules: changes whenever any of them does. */
  readonly revision: string;
}

/**
 * One MCP tool server of a core (`mcp.yaml`): how the host reaches it and how hard it tries to keep it up.
 * A stdio server is a child process (`command`, `args`, `env` added to a minimal environment, `cwd` relative
 * to the core directory); an http server is a streamable HTTP `url`.
 */
export type McpServerSpec = {
  readonly name: string;
  readonly startupTimeoutMs: number;
  /** Restarts after crashes before the host gives the server up (`mcp.server_failed`). */
  readonly maxRestarts: number;
} & (
  | {
      readonly transport: 'stdio';
      readonly command: string;
      readonly args: readonly string[];
      readonly env: Readonly<Record<string, string>>;
      readonly cwd: string;
    }
  | { readonly transport: 'http'; readonly url: string; readonly headers: Readonly<Record<string, string>> }
);
