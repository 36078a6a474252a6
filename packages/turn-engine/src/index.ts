export { type ApprovalCommand, approvalDecider, decideApproval } from './approval.decider.js';
export { type ApprovalRequestSpec, ApprovalRuntime } from './approvals.js';
export {
  type AdmittedTurn,
  COMPACTION_INSTRUCTIONS,
  type CompactionResult,
  DEFAULT_COMPACT_AT,
  DEFAULT_KEEP_MESSAGES,
  EngineClosingError,
  NothingToCompactError,
  type StartedTurn,
  TurnEngine,
  type TurnEngineLogger,
  type TurnEngineOptions,
  type TurnHooks,
  type TurnInput,
  type TurnNotices,
  type TurnOutcome,
} from './engine.js';
export { normalizeArguments, PLAN_MODE_ALLOWED, type PolicyDecision, planModeDecision } from './policy.js';
export { ToolRegistry } from './registry.js';
export { createTurnRuntime, type TurnRuntime, type TurnRuntimeOptions, turnProjectors } from './runtime.js';
export { defineTool, type EffectClass, type ToolContext, type ToolDefinition, type ToolResult } from './tool.js';
export * from './tools/index.js';
export {
  decideToolCall,
  decideTurn,
  type ToolCallCommand,
  type TurnCommand,
  toolCallDecider,
  turnDecider,
} from './turn.decider.js';
export {
  loadTurn,
  type StepRecord,
  type ToolCallRecord,
  type TurnPin,
  type TurnRecord,
  type TurnSelection,
  toolResultText,
} from './turn-state.js';
