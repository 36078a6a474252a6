export {
  type ConnectOperatorOptions,
  connectOperator,
  type OperatorClient,
  type ParamsArg,
  type ResultOf,
} from './connect-operator.js';
export type { Ack, OperatorBackend, OperatorCaller, SubmitResult } from './operator-backend.js';
export {
  GatewayAlreadyRunningError,
  OperatorConnectionClosedError,
  OperatorErrorCode,
  OperatorRequestError,
  UnsafeRuntimeDirError,
} from './operator-errors.js';
export {
  HistoryMessage,
  OperatorApprovalOpened,
  OperatorDeliver,
  OperatorErrorEvent,
  OperatorEvent,
  type OperatorEventName,
  type OperatorEventPayload,
  OperatorHistory,
  OperatorMessage,
  OperatorPromptOpened,
  OperatorReady,
  OperatorShutdown,
  OperatorStatus,
  OperatorWorkUpdated,
  operatorEventNames,
} from './operator-events.js';
export { operatorEventsFrom } from './operator-events-from.js';
export {
  type InitializeResult,
  type OperatorMethodName,
  type OperatorMethods,
  operatorMethodNames,
} from './operator-methods.js';
export {
  CancelParams,
  CompactParams,
  HistoryParams,
  InitializeParams,
  InterruptParams,
  ReplyApprovalParams,
  ReplyPromptParams,
  ShutdownParams,
  StatusParams,
  SubmitParams,
} from './operator-params.js';
export type {
  CompactResult,
  CoreStatus,
  HistoryEntry,
  HistoryResult,
  LiveRunStatus,
  McpServerStatusEntry,
  OpenApprovalStatus,
  StatusResult,
} from './operator-results.js';
export {
  BUILD_STAMP,
  type OperatorSession,
  parseApprovalDecision,
  type SessionApprovalDecision,
  SessionInitializeParams,
  type SessionOpen,
} from './operator-session.js';
export {
  type EventFrame,
  OPERATOR_PACKAGE_VERSION,
  type OperatorLimitSettings,
  OperatorLimits,
  PROTOCOL_VERSION,
  type RequestFrame,
  type RequestId,
  type ResponseFrame,
  SERVER_NAME,
  type WireError,
} from './protocol.js';
export { operatorSocketPath } from './runtime-dir.js';
export { type OperatorStdioServer, type StdioServerOptions, serveStdio } from './serve-stdio.js';
export { type OperatorSocketServer, serveUnixSocket, type UnixSocketServerOptions } from './serve-unix-socket.js';
export type { OperatorServerOptions } from './server-options.js';
