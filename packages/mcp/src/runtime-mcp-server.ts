import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { RuntimeMcpRequestError } from './errors.js';

/**
 * What `demiurge mcp` exposes: the host's own commands (the CLI implements them: through a serving host's
 * gateway when there is one, else on the home's store). Each returns a JSON-serializable result or throws an
 * error whose message is the answer for the client.
 */
export interface RuntimeMcpBackend {
  submitMessage(input: { text: string; sessionId?: string; plan?: boolean }): Promise<unknown>;
  status(): Promise<unknown>;
  listTasks(input: { sessionId?: string; all?: boolean }): Promise<unknown>;
  showTask(taskId: string): Promise<unknown>;
  listRuns(input: { sessionId?: string; live?: boolean }): Promise<unknown>;
  showRun(runId: string): Promise<unknown>;
  cancelRun(runId: string, reason?: string): Promise<unknown>;
  cancelTask(taskId: string, reason?: string): Promise<unknown>;
  /** An error as one line for the client (the CLI's own wording). */
  describeError(error: unknown): string;
}

/** The tools `demiurge mcp` serves, in the order clients list them. */
export const RUNTIME_MCP_TOOLS = [
  'submit_message',
  'status',
  'list_tasks',
  'show_task',
  'list_runs',
  'show_run',
  'cancel',
] as const;

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

/**
 * The runtime as an MCP server (`@modelcontextprotocol/sdk`'s McpServer): submit a message, read the status,
 * list and show tasks and runs, cancel a run or a task. Reads are annotated read-only. A refusal (unknown id,
 * a run that may not be cancelled) is a tool result with `isError` and the reason, never a protocol error.
 *
 * @example
 * ```ts
 * const server = createRuntimeMcpServer(backend, { version: '0.1.0' });
 * await server.connect(new StdioServerTransport());
 * ```
 */
export function createRuntimeMcpServer(backend: RuntimeMcpBackend, info: { version: string }): McpServer {
  const server = new McpServer(
    { name: 'demiurge', version: info.version },
    {
      instructions:
        'A Demiurge agent host: submit_message runs one turn and returns the reply; status, list_tasks, show_task, ' +
        'list_runs and show_run read the durable log; cancel stops a run (run_...) or a detached task (tsk_...).',
    },
  );
  const answer =
    <A>(body: (args: A) => Promise<unknown>) =>
    async (args: A): Promise<CallToolResult> => {
      try {
        const result = await body(args);
        return {
          content: [{ type: 'text', text: JSON.stringify(result, null, 2) }],
          structuredContent: { result } as Record<string, unknown>,
        };
      } catch (err) {
        return { isError: true, content: [{ type: 'text', text: backend.describeError(err) }] };
      }
    };
  server.registerTool(
    'submit_message',
    {
      title: 'Submit a message',
      description:
        'Send a user message to the agent host and wait for the reply of the turn it starts (a new session unless ' +
        'session_id is given). plan: true runs the turn in plan mode (writes are denied unless approved).',
      inputSchema: {
        text: z.string().min(1).describe('the message'),
        session_id: z.string().optional().describe('continue this session (ses_...)'),
        plan: z.boolean().optional().describe('run in plan mode'),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    answer(({ text, session_id, plan }) =>
      backend.submitMessage({
        text,
        ...(session_id ? { sessionId: session_id } : {}),
        ...(plan !== undefined ? { plan } : {}),
      }),
    ),
  );
  server.registerTool(
    'status',
    {
      title: 'Host status',
      description: 'The runtime status: sessions, live runs, open approvals, tasks, work, deliveries, MCP servers.',
      inputSchema: {},
      annotations: READ,
    },
    answer(() => backend.status()),
  );
  server.registerTool(
    'list_tasks',
    {
      title: 'List tasks',
      description: 'Detached tasks, oldest first (one session with session_id; deleted ones only with all: true).',
      inputSchema: { session_id: z.string().optional(), all: z.boolean().optional() },
      annotations: READ,
    },
    answer(({ session_id, all }) =>
      backend.listTasks({ ...(session_id ? { sessionId: session_id } : {}), ...(all ? { all } : {}) }),
    ),
  );
  server.registerTool(
    'show_task',
    {
      title: 'Show a task',
      description: 'One detached task (tsk_...).',
      inputSchema: { task_id: z.string().min(1) },
      annotations: READ,
    },
    answer(({ task_id }) => backend.showTask(task_id)),
  );
  server.registerTool(
    'list_runs',
    {
      title: 'List runs',
      description: 'Runs, oldest first (one session with session_id; only live ones with live: true).',
      inputSchema: { session_id: z.string().optional(), live: z.boolean().optional() },
      annotations: READ,
    },
    answer(({ session_id, live }) =>
      backend.listRuns({ ...(session_id ? { sessionId: session_id } : {}), ...(live ? { live } : {}) }),
    ),
  );
  server.registerTool(
    'show_run',
    {
      title: 'Show a run',
      description: 'One run (run_...): its turns, their tool calls by step, and its approvals.',
      inputSchema: { run_id: z.string().min(1) },
      annotations: READ,
    },
    answer(({ run_id }) => backend.showRun(run_id)),
  );
  server.registerTool(
    'cancel',
    {
      title: 'Cancel a run or a task',
      description:
        'Cancel a live run (run_...: its owner settles it and its child tasks) or a detached task (tsk_...).',
      inputSchema: { id: z.string().min(1), reason: z.string().min(1).optional() },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    answer(async ({ id, reason }) => {
      if (id.startsWith('run_')) return backend.cancelRun(id, reason);
      if (id.startsWith('tsk_')) return backend.cancelTask(id, reason);
      throw new RuntimeMcpRequestError(`cannot cancel "${id}": give a run id (run_...) or a task id (tsk_...)`);
    }),
  );
  return server;
}

/** Serves {@link createRuntimeMcpServer} on stdin/stdout until the client closes; resolves then. */
export async function serveRuntimeMcpStdio(backend: RuntimeMcpBackend, info: { version: string }): Promise<void> {
  const server = createRuntimeMcpServer(backend, info);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close().catch(() => undefined);
}
