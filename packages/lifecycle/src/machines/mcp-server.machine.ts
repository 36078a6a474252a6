import { mcpServerEvents } from '@demiurge/contracts';
import { defineLifecycle, type LifecycleEvent, type StateOf } from '../define-lifecycle.js';
import { lazySetup } from '../lazy-machine.js';

/** The event types the MCP server machine handles, e.g. for a typed `NewEvent<McpServerEventType>`. */
export type McpServerEventType = (typeof mcpServerEvents)[number]['type'];

/**
 * One MCP server as one host runs it: starting, then running once it listed its tools (and listed again when it
 * notifies that they changed); a crash (or a failed
 * start) makes it restarting until the next start succeeds, or failed once its restarts are used up; the host's
 * close (or a later host start, for a host that is gone) stops it.
 */
export const mcpServerMachine = lazySetup({
  types: { events: {} as LifecycleEvent<McpServerEventType> },
}).createMachine({
  id: 'mcp_server',
  initial: 'none',
  states: {
    none: { description: 'Not started by this host yet.', on: { 'mcp.server_starting': 'starting' } },
    starting: {
      description: 'The first start: the process (or connection) is being opened and its tools listed.',
      on: {
        'mcp.server_started': 'running',
        'mcp.server_crashed': { target: 'restarting', description: 'the first start failed' },
        'mcp.server_stopped': 'stopped',
      },
    },
    running: {
      description: 'Connected; its tools are offered to the model.',
      on: {
        'mcp.tools_changed': { target: 'running', description: 'it listed other tools (tools/list_changed)' },
        'mcp.server_crashed': 'restarting',
        'mcp.server_stopped': 'stopped',
      },
    },
    restarting: {
      description: 'Crashed; restarted after a backoff. Its tools answer that the server is restarting.',
      on: {
        'mcp.server_started': 'running',
        'mcp.server_crashed': { target: 'restarting', description: 'a restart attempt failed' },
        'mcp.server_failed': 'failed',
        'mcp.server_stopped': 'stopped',
      },
    },
    failed: { description: 'Its restarts are used up; final for this host.' },
    stopped: { description: 'Stopped with its host; final.' },
  },
});

/** The states of an MCP server machine, `none` included. */
export type McpServerState = StateOf<typeof mcpServerMachine>;

/** The MCP server lifecycle: {@link mcpServerMachine} with its vocabulary and invariants. */
export const mcpServerLifecycle = defineLifecycle({
  aggregate: 'mcp server',
  streamType: 'mcp_server',
  title: 'MCP server',
  summary:
    'One MCP tool server an Agent Core lists (mcp.yaml), as one host runs it: its starts, tool listings, crashes, restarts with backoff and stop. Its tool calls are ordinary tool calls.',
  invariants: [
    'A server is offered to the model only once it listed its tools (running).',
    'A crash is recorded before the restart it schedules; a call in flight on a crashed server is unknown, never re-run.',
    'A server ends once: stopped with its host, or failed when its restarts are used up.',
  ],
  machine: mcpServerMachine,
  vocabulary: mcpServerEvents,
});
