import { type ProjectionSource, type TypedCollection, typedCollection } from '@demiurge/event-store';
import type { ApprovalEntry, ApprovalView } from './approval.view.js';
import type { LiveRunEntry, RunView, SessionRunEntry, TurnRunEntry } from './run.view.js';
import { RunsCollections, sessionPrefix } from './runs.collections.js';
import { runsProjector } from './runs.projector.js';
import { type ToolCallView, turnPrefix } from './tool-call.view.js';

/** The `runs` read model, typed: runs, turns' runs, tool calls and approvals. */
export interface RunsReader {
  /** One run, or undefined. */
  get(runId: string): Promise<RunView | undefined>;
  /** Every run (final and archived ones too), in id order. */
  all(): Promise<RunView[]>;
  /** Runs not in a final status. */
  live(): Promise<LiveRunEntry[]>;
  /** Every run of a session, in queue order. */
  ofSession(sessionId: string): Promise<SessionRunEntry[]>;
  /** The run a turn was started for, and the turn's state. */
  turnRun(turnId: string): Promise<TurnRunEntry | undefined>;
  toolCall(toolCallId: string): Promise<ToolCallView | undefined>;
  /** Every tool call, in id order. */
  toolCalls(): Promise<ToolCallView[]>;
  /** The ids of a turn's tool calls, by step then call. */
  toolCallIdsOfTurn(turnId: string): Promise<string[]>;
  approval(approvalId: string): Promise<ApprovalView | undefined>;
  /** Every approval of a session (history). */
  approvalsOfSession(sessionId: string): Promise<ApprovalEntry[]>;
  /** Approvals `requested` or `granted`. */
  openApprovals(): Promise<ApprovalEntry[]>;
  /** The raw collections, for paging (`after`, `limit`). */
  readonly collections: {
    readonly runs: TypedCollection<RunView>;
    readonly liveRuns: TypedCollection<LiveRunEntry>;
  };
}

/**
 * The typed reader of the `runs` projection.
 * @example
 * const run = await runsReader(store).get(runId);
 */
export function runsReader(store: ProjectionSource): RunsReader {
  const reader = store.projection(runsProjector.name);
  const runs = typedCollection<RunView>(reader, RunsCollections.runs);
  const liveRuns = typedCollection<LiveRunEntry>(reader, RunsCollections.liveRuns);
  const toolCalls = typedCollection<ToolCallView>(reader, RunsCollections.toolCalls);
  const approvals = typedCollection<ApprovalView>(reader, RunsCollections.approvals);
  return {
    get: (runId) => runs.get(runId),
    all: () => runs.list(),
    live: () => liveRuns.list(),
    ofSession: (sessionId) =>
      reader.list<SessionRunEntry>(RunsCollections.runsBySession, { prefix: sessionPrefix(sessionId) }),
    turnRun: (turnId) => reader.get<TurnRunEntry>(RunsCollections.turnRuns, turnId),
    toolCall: (toolCallId) => toolCalls.get(toolCallId),
    toolCalls: () => toolCalls.list(),
    toolCallIdsOfTurn: (turnId) => reader.list<string>(RunsCollections.toolCallsByTurn, { prefix: turnPrefix(turnId) }),
    approval: (approvalId) => approvals.get(approvalId),
    approvalsOfSession: (sessionId) =>
      reader.list<ApprovalEntry>(RunsCollections.approvalsBySession, { prefix: sessionPrefix(sessionId) }),
    openApprovals: () => reader.list<ApprovalEntry>(RunsCollections.openApprovals),
    collections: { runs, liveRuns },
  };
}
