export { type McpServerStatus, McpServersCollections, mcpServersProjector } from './mcp-servers.projector.js';
export { type McpServersReader, mcpServersReader } from './mcp-servers.reader.js';
