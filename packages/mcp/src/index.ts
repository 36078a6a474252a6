export { McpServerUnavailableError, McpToolError, RuntimeMcpRequestError } from './errors.js';
export {
  connectMcpServer,
  describeTarget,
  MCP_CALL_TIMEOUT_MS,
  MCP_CLIENT_INFO,
  type McpConnection,
} from './mcp-connection.js';
export { MCP_RESULT_MAX_CHARS, resultText } from './mcp-result.js';
export {
  DEFAULT_MCP_BACKOFF,
  MCP_RESTART_WAIT_MS,
  type McpBackoff,
  type McpLogger,
  type McpServerLiveStatus,
  McpServerSupervisor,
  type McpServerSupervisorOptions,
} from './mcp-server-supervisor.js';
export { McpServers, type McpServersOptions } from './mcp-servers.js';
export { MCP_SERVER_EVENT_TYPES, type McpServerStatus, mcpServerStatus, stopServersOfGoneHosts } from './mcp-status.js';
export type { McpToolChange } from './mcp-tool-set.js';
export { isReadOnly, MCP_NAMESPACE_SEPARATOR, mcpToolDefinition, namespacedToolName } from './mcp-tools.js';
export {
  createRuntimeMcpServer,
  RUNTIME_MCP_TOOLS,
  type RuntimeMcpBackend,
  serveRuntimeMcpStdio,
} from './runtime-mcp-server.js';
