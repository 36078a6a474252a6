import { DemiurgeError, ErrorCode } from '@demiurge/contracts';

/**
 * An MCP tool was called while its server was not connected (starting again after a crash, given up, or
 * stopped with the host). Nothing was sent to the server: the call failed, it did not take effect.
 */
export class McpServerUnavailableError extends DemiurgeError {
  override readonly name = 'McpServerUnavailableError';
  readonly code = ErrorCode.ToolFailed;
  constructor(
    readonly server: string,
    readonly state: string,
    message: string,
  ) {
    super(message);
  }
}

/** The MCP server answered the call with an error (`isError`, or a JSON-RPC error such as invalid params). */
export class McpToolError extends DemiurgeError {
  override readonly name = 'McpToolError';
  readonly code = ErrorCode.ToolFailed;
  constructor(
    readonly tool: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A request to the runtime's MCP server named something it cannot act on (e.g. cancel of a session id). */
export class RuntimeMcpRequestError extends DemiurgeError {
  override readonly name = 'RuntimeMcpRequestError';
  readonly code = ErrorCode.InvalidSpec;
}
