/** Results of the read methods of the protocol (`operator.status`, `operator.history`), as they go on the wire. */

/** A run that is not final, in `operator.status`. */
export interface LiveRunStatus {
  readonly run_id: string;
  readonly session_id: string;
  readonly status: string;
  readonly owner: string | null;
}

/** An open (requested or granted) approval, in `operator.status`. */
export interface OpenApprovalStatus {
  readonly approval_id: string;
  readonly session_id: string;
  readonly run_id: string | null;
  readonly tool: string | null;
  readonly arguments: unknown;
  readonly reason: string;
  readonly status: string;
  readonly expires_at: string | null;
}

/**
 * The result of `operator.status`. The protocol fixes its frame; the host fills in its own read models:
 * `Work` (the operator status view), `Schedules`, and with `session_id` the `Session` and its `Run`s.
 */
/** The core part of `operator.status`. */
export interface CoreStatus {
  readonly id: string;
  /** The current revision (64 hex digits), or null when none was saved (the working copy runs). */
  readonly revision: string | null;
  /** Its place in the core's history (1 = first), or null. */
  readonly number: number | null;
}

/** One MCP tool server of the Agent Core (`mcp.yaml`), as the host that ran it last reported it. */
export interface McpServerStatusEntry {
  readonly server: string;
  readonly mcp_server_id: string;
  /** `starting`, `running`, `restarting`, `failed` or `stopped` (the MCP server machine's states). */
  readonly state: string;
  readonly transport: string;
  readonly target: string;
  /** The tools of its latest listing. */
  readonly tools: number;
  readonly attempts: number;
  readonly crashes: number;
  readonly last_reason: string | null;
  readonly host: string;
  readonly since: string;
}

export interface StatusResult<Work = unknown, Schedules = unknown, Session = unknown, Run = unknown> {
  readonly host: { readonly owner: string; readonly closing: boolean; readonly provider: string };
  /** The Agent Core the next turn runs: its id and current revision (null: unversioned working copy). */
  readonly core?: CoreStatus;
  readonly work: Work;
  readonly live_runs: readonly LiveRunStatus[];
  readonly schedules: Schedules;
  readonly open_approvals: readonly OpenApprovalStatus[];
  /** The core's MCP tool servers (empty when it lists none). */
  readonly mcp_servers?: readonly McpServerStatusEntry[];
  /** With `session_id`: the session. */
  readonly session?: Session;
  /** With `session_id`: the session's runs, in queue order. */
  readonly runs?: readonly Run[];
}

/** One kept message of a session, in `operator.history`. */
export interface HistoryEntry {
  readonly message_id: string;
  readonly role: string;
  readonly text: string;
  readonly visibility: string;
  readonly turn_id?: string;
}

/** The result of `operator.history`: a session's kept messages, oldest first (the last `limit`). */
export interface HistoryResult {
  readonly session_id: string;
  readonly messages: readonly HistoryEntry[];
}

/** The result of `operator.compact`: the compaction recorded (`session.compacted`). */
export interface CompactResult {
  readonly session_id: string;
  readonly compaction_id: string;
  /** Messages the summary covers (from the session's first). */
  readonly message_count: number;
  readonly through_message_id: string;
  readonly summary: string;
  /** Estimated request tokens before and after, and the context window. */
  readonly tokens: { readonly before: number; readonly after: number; readonly window: number };
}
