import type { IdGenerator } from '@demiurge/contracts';
import {
  type ApprovalEventType,
  type ApprovalState,
  approvalLifecycle,
  type RunEventType,
  type RunState,
  runLifecycle,
  type ToolCallEventType,
  type ToolCallState,
  type TurnEventType,
  type TurnState,
  toolCallLifecycle,
  turnLifecycle,
} from '@demiurge/lifecycle';
import type { WalkSpec } from '@demiurge/lifecycle/testing';

/**
 * Valid data for every run, turn, tool-call and approval event, for `MachineWalk` (`@demiurge/lifecycle/testing`
 * ships walks for tasks, work and deliveries only): shaped like the zod schemas of contracts' run, turn,
 * tool-call and approval events, optional fields present or not by variant. Each model also keeps what
 * the runs read model should show of it.
 */

const FINAL_RUN_STATES: readonly RunState[] = ['completed', 'failed', 'cancelled', 'archived'];
const at = (now: number, ms: number) => new Date(now + ms).toISOString();

/** What the walk knows of one run. */
export interface RunModel {
  readonly runId: string;
  readonly sessionId: string;
  state: RunState;
  owner: string | null;
  leaseToken: string | null;
  claims: number;
  turnIds: string[];
  currentTurnId: string | null;
}

function runData(m: RunModel, type: RunEventType, v: number, now: number): Record<string, unknown> {
  const { runId } = m;
  const odd = v % 2 === 1;
  // A third of heartbeats and expiries name a stale lease, which must not touch the current one.
  const token = v % 3 === 0 ? `${runId}-stale` : (m.leaseToken ?? `${runId}-none`);
  switch (type) {
    case 'run.queued':
      return { runId, sessionId: m.sessionId };
    case 'run.started':
      return { runId, owner: `host-${v % 2}` };
    case 'run.waiting':
    case 'run.paused':
    case 'run.cancel_requested':
      return { runId, reason: `${type} ${v % 3}` };
    case 'run.blocked':
    case 'run.cancelled':
      return { runId, reason: `${type} ${v % 3}`, resumable: odd };
    case 'run.resumed':
      return { runId, ...(odd ? { checkpointId: `cp${v % 4}` } : {}) };
    case 'run.completed':
    case 'run.archived':
      return { runId };
    case 'run.failed':
      return { runId, error: { code: `e${v % 3}`, message: 'it broke' } };
    case 'run.checkpointed':
      return { runId, checkpointId: `cp${v % 4}`, stage: `stage-${v % 3}` };
    case 'run.owner_claimed':
      return { runId, owner: `host-${v % 2}`, leaseToken: `${runId}-l${m.claims + 1}`, leaseUntil: at(now, 30_000) };
    case 'run.owner_heartbeat':
      return { runId, owner: m.owner ?? 'host-0', leaseToken: token, leaseUntil: at(now, 30_000 + (v % 7)) };
    case 'run.owner_lease_expired':
      return { runId, owner: m.owner ?? 'host-0', leaseToken: token };
  }
}

/** A walk spec over runs of the given sessions (the n-th run goes to session n mod count). */
export function runWalk(ids: IdGenerator, sessions: readonly string[]): WalkSpec<RunState, RunEventType, RunModel> {
  let made = 0;
  return {
    lifecycle: runLifecycle,
    streamType: 'run',
    create: () => ({
      runId: ids.next('run'),
      sessionId: sessions[made++ % sessions.length]!,
      state: 'none',
      owner: null,
      leaseToken: null,
      claims: 0,
      turnIds: [],
      currentTurnId: null,
    }),
    streamId: (m) => m.runId,
    data: runData,
    taken(m, type, data) {
      const { owner, leaseToken } = data as { owner: string; leaseToken: string };
      if (type === 'run.started' && owner !== m.owner) m.leaseToken = null;
      if (type === 'run.started') m.owner = owner;
      if (type === 'run.owner_claimed') [m.owner, m.leaseToken, m.claims] = [owner, leaseToken, m.claims + 1];
      if (type === 'run.owner_heartbeat' && leaseToken === m.leaseToken) m.owner = owner;
      if (type === 'run.owner_lease_expired' && leaseToken === m.leaseToken) [m.owner, m.leaseToken] = [null, null];
      if (FINAL_RUN_STATES.includes(m.state)) m.leaseToken = null;
    },
  };
}

/** What the walk knows of one turn: the run it may be started for, and whether the read model tracks it. */
export interface TurnModel {
  readonly turnId: string;
  readonly run: RunModel;
  state: TurnState;
  /** Started with the runId of a run already queued: the read model follows it. */
  tracked: boolean;
}

function turnData(m: TurnModel, type: TurnEventType, v: number): Record<string, unknown> {
  const { turnId } = m;
  const sessionId = m.run.sessionId;
  switch (type) {
    case 'turn.started':
      return { turnId, sessionId, ...(v % 4 !== 0 ? { runId: m.run.runId } : {}) };
    case 'turn.model_responded':
      return {
        turnId,
        runId: m.run.runId,
        stepId: `s${1 + (v % 12)}`,
        provider: 'fake',
        model: 'fake-1',
        content: 'ok',
        toolCalls: [],
        usage: { inputTokens: 3, outputTokens: 1 },
      };
    case 'turn.completed':
      return { turnId, sessionId };
    case 'turn.failed':
      return { turnId, sessionId, error: { code: 'provider', message: 'down' } };
    case 'turn.cancelled':
      return { turnId, sessionId, reason: 'run stop' };
  }
}

/** A walk spec over turns of the runs walked so far (the n-th turn goes to run n mod count). */
export function turnWalk(ids: IdGenerator, runs: readonly RunModel[]): WalkSpec<TurnState, TurnEventType, TurnModel> {
  let made = 0;
  return {
    lifecycle: turnLifecycle,
    streamType: 'turn',
    create: () => ({ turnId: ids.next('trn'), run: runs[made++ % runs.length]!, state: 'none', tracked: false }),
    streamId: (m) => m.turnId,
    data: turnData,
    taken(m, type, data) {
      const run = m.run;
      if (type === 'turn.started' && data.runId !== undefined && run.state !== 'none') {
        m.tracked = true;
        run.turnIds.push(m.turnId);
        run.currentTurnId = m.turnId;
      } else if (type !== 'turn.started' && m.tracked && run.currentTurnId === m.turnId && m.state !== 'running') {
        run.currentTurnId = null;
      }
    },
  };
}

/** What the walk knows of one tool call. */
export interface ToolCallModel {
  readonly toolCallId: string;
  readonly sessionId: string;
  readonly turnId: string;
  readonly stepId: string;
  state: ToolCallState;
}

function toolCallData(m: ToolCallModel, type: ToolCallEventType, v: number): Record<string, unknown> {
  const { toolCallId } = m;
  const odd = v % 2 === 1;
  switch (type) {
    case 'tool_call.requested':
      return {
        toolCallId,
        sessionId: m.sessionId,
        turnId: m.turnId,
        stepId: m.stepId,
        tool: odd ? 'fs.write' : 'fs.read',
        idempotent: !odd,
        ...(v % 3 === 0 ? { runId: 'run-of-the-turn', effect: odd ? 'write.file' : 'read' } : {}),
        ...(v % 3 === 1 ? { arguments: { path: `f${v % 5}.txt`, lines: [1, 2] } } : {}),
      };
    case 'tool_call.denied':
      return { toolCallId, policy: 'plan-mode', reason: 'writes are off in plan mode' };
    case 'tool_call.started':
      return { toolCallId };
    case 'tool_call.process_started':
      return { toolCallId, spawnId: toolCallId, host: 'h1', pid: 100 + v, pgid: 100 + v, platform: 'linux' };
    case 'tool_call.process_stopped':
      return { toolCallId, pid: 100 + v, signal: odd ? 'SIGKILL' : 'SIGTERM', reason: 'its host died' };
    case 'tool_call.succeeded':
      return { toolCallId, ...(odd ? { output: `out ${v % 10}` } : {}), ...(v % 3 === 0 ? { resultRef: 'art' } : {}) };
    case 'tool_call.failed':
      return { toolCallId, error: { code: `e${v % 3}`, message: 'it broke' } };
    case 'tool_call.cancelled':
    case 'tool_call.unknown':
      return { toolCallId, reason: `${type} ${v % 3}` };
    case 'tool_call.resolved':
      return { toolCallId, decision: odd ? 'succeeded' : 'failed', ...(v % 3 === 0 ? { note: 'checked' } : {}) };
  }
}

/**
 * A walk spec over tool calls of a few turns: the n-th call goes to turn n mod count, at step
 * `s<1 + n mod 12>`, so turns hold steps s1 to s12 (s2 and s10 sort numerically only by their padded key).
 */
export function toolCallWalk(
  ids: IdGenerator,
  sessionId: string,
  turnIds: readonly string[],
): WalkSpec<ToolCallState, ToolCallEventType, ToolCallModel> {
  let made = 0;
  return {
    lifecycle: toolCallLifecycle,
    streamType: 'tool_call',
    create: () => {
      const n = made++;
      return {
        toolCallId: ids.next('tcl'),
        sessionId,
        turnId: turnIds[n % turnIds.length]!,
        stepId: `s${1 + (n % 12)}`,
        state: 'none',
      };
    },
    streamId: (m) => m.toolCallId,
    data: toolCallData,
  };
}

/** What the walk knows of one approval. */
export interface ApprovalModel {
  readonly approvalId: string;
  readonly sessionId: string;
  readonly toolCallId: string;
  state: ApprovalState;
}

function approvalData(m: ApprovalModel, type: ApprovalEventType, v: number, now: number): Record<string, unknown> {
  const { approvalId } = m;
  const odd = v % 2 === 1;
  switch (type) {
    case 'approval.requested':
      return {
        approvalId,
        sessionId: m.sessionId,
        action: 'write a file',
        reason: 'plan mode',
        ...(odd ? { toolCallId: m.toolCallId, tool: 'fs.write', arguments: { path: 'a.txt' }, runId: 'run-x' } : {}),
        ...(v % 3 === 0 ? { expiresAt: at(now, 60_000) } : {}),
      };
    case 'approval.granted':
    case 'approval.denied':
      return { approvalId, ...(odd ? { note: 'ok' } : {}) };
    case 'approval.expired':
      return { approvalId };
    case 'approval.consumed':
      return { approvalId, ...(odd ? { toolCallId: m.toolCallId } : {}) };
  }
}

/** A walk spec over approvals of the given sessions (the n-th approval goes to session n mod count). */
export function approvalWalk(
  ids: IdGenerator,
  sessions: readonly string[],
): WalkSpec<ApprovalState, ApprovalEventType, ApprovalModel> {
  let made = 0;
  return {
    lifecycle: approvalLifecycle,
    streamType: 'approval',
    create: () => ({
      approvalId: ids.next('apr'),
      sessionId: sessions[made++ % sessions.length]!,
      toolCallId: ids.next('tcl'),
      state: 'none',
    }),
    streamId: (m) => m.approvalId,
    data: approvalData,
  };
}
