/** Collections of the `runs` projector. */
export const RunsCollections = {
  /** id = runId → `RunView`, every run (final and archived ones too) */
  runs: 'runs',
  /** id = `sessionRunKey(sessionId, runId)` → `SessionRunEntry`, every run */
  runsBySession: 'runs-by-session',
  /** id = runId → `LiveRunEntry`, runs not in a final status (`isRunFinal`) */
  liveRuns: 'live-runs',
  /** id = turnId → `TurnRunEntry`, turns started for a known run (later turn events carry no runId) */
  turnRuns: 'turn-runs',
  /** id = toolCallId → `ToolCallView`, every tool call */
  toolCalls: 'tool-calls',
  /** id = `turnToolCallKey(turnId, stepId, toolCallId)` → the toolCallId, every tool call */
  toolCallsByTurn: 'tool-calls-by-turn',
  /** id = approvalId → `ApprovalView`, every approval */
  approvals: 'approvals',
  /** id = `sessionApprovalKey(sessionId, approvalId)` → `ApprovalEntry`, every approval (history) */
  approvalsBySession: 'approvals-by-session',
  /** id = approvalId → `ApprovalEntry`, approvals `requested` or `granted` (`isApprovalOpen`) */
  openApprovals: 'open-approvals',
} as const;

/** The prefix of a session's entries in `runs-by-session` and `approvals-by-session`. */
export const sessionPrefix = (sessionId: string): string => `${sessionId}/`;
