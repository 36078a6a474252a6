import { NotFoundError } from '@demiurge/control-plane';
import type { EventStore } from '@demiurge/event-store';
import { type ApprovalView, type RunView, runsReader, type ToolCallView } from '@demiurge/projector-runs';
import { sessionsReader, type TurnView } from '@demiurge/projector-sessions';
import { ADMIN_CLI_ACTOR } from '@demiurge/sessions';
import { describeLease, orDash, shorten, shortJson, table } from '../format.js';
import { resolveHome } from '../home.js';
import type { CommandIo } from '../io.js';
import type { JsonOptions } from '../options.js';
import { type CliRuntime, cliRuntime } from '../runtime.js';
import { withRuntimeStore } from '../runtime-store.js';

export interface RunsListOptions extends JsonOptions {
  readonly session?: string;
  readonly live: boolean;
}

export interface RunReasonOptions extends JsonOptions {
  readonly reason?: string;
}

/** One step of a turn: the tool calls its model round asked for, in request order. */
export interface RunStep {
  readonly stepId: string;
  readonly toolCalls: readonly ToolCallView[];
}

/** A turn of a run as `runs show` reports it. */
export interface RunTurn {
  readonly turnId: string;
  /** The sessions projection's view of the turn; null when it has none (a turn of another stream). */
  readonly turn: TurnView | null;
  /** The turn machine's state as the runs projection saw it. */
  readonly status: string | null;
  readonly steps: readonly RunStep[];
}

async function listRuns(store: EventStore, o: RunsListOptions): Promise<RunView[]> {
  const reader = runsReader(store);
  let ids: string[] | undefined;
  if (o.session) ids = (await reader.ofSession(o.session)).map((e) => e.runId);
  if (o.live) {
    const live = (await reader.live()).map((e) => e.runId);
    ids = ids ? ids.filter((id) => live.includes(id)) : live;
  }
  if (!ids) return reader.all();
  const runs: RunView[] = [];
  for (const id of ids) {
    const run = await reader.get(id);
    if (run) runs.push(run);
  }
  return runs;
}

/** `demiurge runs list`: all runs, one session's, or the live ones. */
export async function runsList(o: RunsListOptions, io: CommandIo): Promise<void> {
  await withRuntimeStore(resolveHome(o.home), async (store) => {
    const runs = await listRuns(store, o);
    if (o.json) return io.out(JSON.stringify({ runs }));
    if (runs.length === 0) return io.out(o.live ? 'no live runs' : 'no runs');
    const now = Date.now();
    for (const line of table(runs, [
      { heading: 'run', cell: (r) => r.runId },
      { heading: 'session', cell: (r) => r.sessionId },
      { heading: 'status', cell: (r) => r.status },
      { heading: 'owner', cell: (r) => orDash(r.owner) },
      { heading: 'lease', cell: (r) => describeLease(r.leaseUntil, now) },
      { heading: 'turns', cell: (r) => String(r.turnIds.length) },
      { heading: 'reason', cell: (r) => shorten(r.reason ?? r.error?.message ?? '-', 60) },
    ]))
      io.out(line);
  });
}

/** A run's turns with their tool calls grouped by step (steps in numeric order, calls in request order). */
async function runTurns(store: EventStore, run: RunView): Promise<RunTurn[]> {
  const runs = runsReader(store);
  const sessions = sessionsReader(store);
  const turns: RunTurn[] = [];
  for (const turnId of run.turnIds) {
    const turn = (await sessions.turn(run.sessionId, turnId)) ?? null;
    const entry = await runs.turnRun(turnId);
    const steps: { stepId: string; toolCalls: ToolCallView[] }[] = [];
    for (const id of await runs.toolCallIdsOfTurn(turnId)) {
      const call = await runs.toolCall(id);
      if (!call) continue;
      const last = steps[steps.length - 1];
      if (last?.stepId === call.stepId) last.toolCalls.push(call);
      else steps.push({ stepId: call.stepId, toolCalls: [call] });
    }
    turns.push({ turnId, turn, status: entry?.status ?? turn?.status ?? null, steps });
  }
  return turns;
}

async function runApprovals(store: EventStore, run: RunView): Promise<ApprovalView[]> {
  const reader = runsReader(store);
  const out: ApprovalView[] = [];
  for (const e of await reader.approvalsOfSession(run.sessionId)) {
    const approval = await reader.approval(e.approvalId);
    if (approval?.runId === run.runId) out.push(approval);
  }
  return out;
}

async function getRun(store: EventStore, id: string): Promise<RunView> {
  const run = await runsReader(store).get(id);
  if (!run) throw new NotFoundError('run', id);
  return run;
}

function renderRun(run: RunView, now: number): string[] {
  return [
    `run ${run.runId}  [${run.status}]  session ${run.sessionId}`,
    `  owner ${orDash(run.owner)}, lease ${describeLease(run.leaseUntil, now)}`,
    `  stage ${orDash(run.stage)}, checkpoint ${orDash(run.lastCheckpointId)}, created ${run.createdAt}, updated ${run.updatedAt}${run.endedAt ? `, ended ${run.endedAt}` : ''}`,
    ...(run.reason ? [`  reason: ${run.reason}${run.resumable === null ? '' : ` (resumable: ${run.resumable})`}`] : []),
    ...(run.error ? [`  error: ${run.error.code}: ${run.error.message}`] : []),
  ];
}

/** `demiurge runs show ID`: the run, its turns with their tool calls by step, its approvals. */
export async function runsShow(id: string, o: JsonOptions, io: CommandIo): Promise<void> {
  await withRuntimeStore(resolveHome(o.home), async (store) => {
    const run = await getRun(store, id);
    const turns = await runTurns(store, run);
    const approvals = await runApprovals(store, run);
    if (o.json) return io.out(JSON.stringify({ run, turns, approvals }));
    for (const line of renderRun(run, Date.now())) io.out(line);
    io.out(`turns (${turns.length})`);
    for (const t of turns) {
      const error = t.turn?.error ? `  ${t.turn.error.code}: ${shorten(t.turn.error.message, 60)}` : '';
      io.out(`  turn ${t.turnId}  [${orDash(t.status)}]  started ${orDash(t.turn?.startedAt)}${error}`);
      for (const step of t.steps) {
        io.out(`    step ${step.stepId}`);
        for (const c of step.toolCalls) {
          const outcome = c.error
            ? `${c.error.code}: ${c.error.message}`
            : c.denial
              ? `denied by ${c.denial.policy}: ${c.denial.reason}`
              : (c.reason ?? c.output ?? '');
          io.out(
            `      ${c.toolCallId}  ${c.tool} ${shortJson(c.arguments, 60)}  [${c.status}]  ${shorten(outcome, 60)}`.trimEnd(),
          );
        }
      }
    }
    if (approvals.length > 0) {
      io.out(`approvals (${approvals.length})`);
      for (const a of approvals) io.out(`  ${a.approvalId}  ${a.action}  [${a.status}]  ${shorten(a.reason, 60)}`);
    }
  });
}

/** `demiurge runs cancel ID`: asks the run to stop (RunRuntime.requestCancel, as the operator `cli`). */
export function runsCancel(id: string, o: RunReasonOptions, io: CommandIo): Promise<void> {
  return runsControl(id, o, io, (rt) =>
    rt.runs.requestCancel(id, o.reason ?? 'cancelled by the operator (cli)', ADMIN_CLI_ACTOR),
  );
}

/** `demiurge runs pause ID`. */
export function runsPause(id: string, o: RunReasonOptions, io: CommandIo): Promise<void> {
  return runsControl(id, o, io, (rt) => rt.runs.pause(id, o.reason ?? 'paused by the operator (cli)'));
}

/** `demiurge runs resume ID`: a paused, waiting or resumable blocked run. */
export function runsResume(id: string, o: JsonOptions, io: CommandIo): Promise<void> {
  return runsControl(id, o, io, (rt) => rt.runs.resume(id));
}

async function runsControl(
  id: string,
  o: JsonOptions,
  io: CommandIo,
  command: (rt: CliRuntime) => Promise<unknown>,
): Promise<void> {
  await withRuntimeStore(resolveHome(o.home), async (store) => {
    await getRun(store, id);
    await command(cliRuntime(store));
    const run = await getRun(store, id);
    if (o.json) return io.out(JSON.stringify({ run }));
    io.out(`run ${run.runId}: ${run.status}${run.reason ? ` (${run.reason})` : ''}`);
    if (run.status === 'cancelling') {
      io.out('  its owner stops dispatching, settles in-flight work and cancels its child tasks');
    } else if (run.status === 'paused') {
      io.out('  its owner finishes the step under way (a running tool call completes and is recorded), then waits');
    } else if (run.status === 'running') {
      const owned = run.owner !== null && run.leaseUntil !== null && Date.parse(run.leaseUntil) > Date.now();
      io.out(
        owned
          ? `  its owner ${run.owner} continues it`
          : '  it has no live owner: a serving host (demiurge serve) continues it now, else the next host start does',
      );
    }
  });
}
