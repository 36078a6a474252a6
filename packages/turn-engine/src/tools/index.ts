import type { ToolDefinition } from '../tool.js';
import { editFileTool, listDirTool, readFileTool, writeFileTool } from './files.js';
import { shellTool } from './shell.js';

export { writeFileAtomic } from './atomic-write.js';
export {
  ToolCancelledError,
  ToolFailedError,
  type ToolFailureReason,
  ToolOutcomeUnknownError,
  throwIfCancelled,
  WorkspaceEscapeError,
} from './errors.js';
export { createEvolveTool, EvolveCoreInput } from './evolve.js';
export {
  EditFileInput,
  editFileTool,
  LIST_DIR_MAX_ENTRIES,
  ListDirInput,
  listDirTool,
  READ_FILE_MAX_BYTES,
  ReadFileInput,
  readFileTool,
  WriteFileInput,
  writeFileTool,
} from './files.js';
export {
  SHELL_DEFAULT_TIMEOUT_SECONDS,
  SHELL_MAX_OUTPUT_BYTES,
  SHELL_MAX_TIMEOUT_SECONDS,
  ShellInput,
  shellTool,
} from './shell.js';
export { classifyShellCommand } from './shell-classify.js';
export {
  createTaskTools,
  DEFAULT_DELEGATION_LIMITS,
  DelegateTaskInput,
  type DelegationLimits,
  type KnownSlots,
  modelView,
  operatorView,
  TaskToolError,
  type TaskToolsOptions,
  withBackgroundShell,
} from './tasks.js';
export { isInside, type ResolveOptions, resolveInWorkspace, workspaceRelative } from './workspace-path.js';

/**
 * The built-in workspace tools: `read_file`, `list_dir`, `write_file`, `edit_file` and `shell`. Every path
 * they take is contained in `ctx.workspaceRoot` by {@link resolveInWorkspace}.
 *
 * @example
 * ```ts
 * const registry = new Map(workspaceTools.map((tool) => [tool.name, tool]));
 * ```
 */
export const workspaceTools: readonly ToolDefinition[] = [
  readFileTool,
  listDirTool,
  writeFileTool,
  editFileTool,
  shellTool,
];
