import type { DemiurgeApp } from '../app.js';
import { mcpStatusEntries } from '../mcp-status-entries.js';
import type { ToolDisplay } from './event-relay.js';
import { workItem } from './frames.js';
import { SLASH_COMMANDS } from './slash-commands.js';

const TERMINAL_TASK = new Set(['completed', 'failed', 'cancelled', 'deleted', 'archived']);

/** The connection's own state the snapshot shows. */
export interface ConnectionState {
  readonly sessionId: string;
  /** Turns this connection started that have not settled. */
  readonly activeTurns: number;
  readonly timezone: string | undefined;
  readonly toolDisplay: ToolDisplay;
  readonly busyMode: 'interrupt' | 'queue';
  readonly queuedInputs: number;
  readonly pendingPrompts: number;
  readonly lastError: string;
}

/**
 * The original status snapshot (plus this project's `mode` and `mcp_servers`, fields the original TUI ignores):
 * `operator.status` and `initialize`'s result.
 */
export async function sessionSnapshot(app: DemiurgeApp, state: ConnectionState): Promise<Record<string, unknown>> {
  const session = await app.runtime.sessions.get(state.sessionId);
  const tasks = await app.runtime.controlPlane.listTasks(state.sessionId);
  const approvals = await app.runtime.approvals.listOpen(state.sessionId);
  const running = state.activeTurns > 0 || session.activeTurnId !== null;
  const zone = state.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  return {
    workspace: app.workspace,
    core_id: app.core.id,
    // The current core revision (docs/core-revisions.md); without one, the working copy's content hash.
    core_revision: ((await app.coreSource.status()).revision ?? app.core.revision).slice(0, 12),
    session_id: state.sessionId,
    provider: app.provider.name,
    model: app.provider.model,
    runtime_timezone: zone,
    runtime_timezone_source: state.timezone ? 'config' : 'system',
    session: { session_id: state.sessionId, channel: 'operator', source: 'tui', conversation_key: state.sessionId },
    status: running ? 'running' : 'idle',
    tool_display: state.toolDisplay,
    user_message_align: 'left',
    demiurge_theme_color: '#ff9afc',
    user_theme_color: '#9cc9ff',
    busy_mode: state.busyMode,
    queued_inputs: state.queuedInputs,
    background_tasks: tasks.filter((t) => !TERMINAL_TASK.has(t.status)).length,
    message_count: session.messageCount,
    pending_prompts: state.pendingPrompts,
    pending_approvals: approvals.length,
    last_error: state.lastError,
    work: tasks.slice(-20).map(workItem),
    mode: session.mode,
    mcp_servers: await mcpStatusEntries(app.store),
  };
}

/** `operator.ready`: the snapshot's identity fields and the slash commands. */
export function readyPayload(s: Record<string, unknown>): Record<string, unknown> {
  return {
    core_id: s.core_id,
    core_revision: s.core_revision,
    session_id: s.session_id,
    session: s.session,
    workspace: s.workspace,
    provider: s.provider,
    model: s.model,
    runtime_timezone: s.runtime_timezone,
    runtime_timezone_source: s.runtime_timezone_source,
    tool_display: s.tool_display,
    user_message_align: s.user_message_align,
    demiurge_theme_color: s.demiurge_theme_color,
    user_theme_color: s.user_theme_color,
    busy_mode: s.busy_mode,
    slash_commands: SLASH_COMMANDS,
  };
}
