import { createFakeClock, createSeededIdGenerator, propertySettings } from '@demiurge/contracts/testing';
import { propertyStores } from '@demiurge/event-store-postgres/testing';
import {
  approvalLifecycle,
  finalStates,
  type Lifecycle,
  runLifecycle,
  toolCallLifecycle,
  transitionTable,
  turnLifecycle,
} from '@demiurge/lifecycle';
import { appendStreams, edgeKey, MachineWalk, type Step, steps, type WalkEvent } from '@demiurge/lifecycle/testing';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type ApprovalModel,
  approvalWalk,
  type RunModel,
  runWalk,
  type ToolCallModel,
  type TurnModel,
  toolCallWalk,
  turnWalk,
} from '../test/walks.js';
import {
  type ApprovalEntry,
  type ApprovalView,
  isRunFinal,
  type LiveRunEntry,
  type RunView,
  runsProjector,
  type SessionRunEntry,
  sessionApprovalKey,
  sessionRunKey,
  type ToolCallView,
  type TurnRunEntry,
  turnToolCallKey,
} from './index.js';

type Dump = Record<string, Record<string, unknown>>;

interface Models {
  readonly runs: readonly RunModel[];
  readonly turns: readonly TurnModel[];
  readonly toolCalls: readonly ToolCallModel[];
  readonly approvals: readonly ApprovalModel[];
}

const created = <M extends { state: string }>(models: readonly M[]) => models.filter((m) => m.state !== 'none');
const stepNumber = (key: string) => Number(/\/s(\d+)\//.exec(key)?.[1]);

function checkRuns(dump: Dump, models: readonly RunModel[]) {
  const runs = (dump.runs ?? {}) as Record<string, RunView>;
  const bySession: Record<string, SessionRunEntry> = {};
  const live: Record<string, LiveRunEntry> = {};
  expect(Object.keys(runs).length).toBe(created(models).length);
  for (const m of created(models)) {
    const view = runs[m.runId]!;
    expect(view).toMatchObject({
      sessionId: m.sessionId,
      status: m.state,
      owner: m.owner,
      leaseToken: m.leaseToken,
      turnIds: m.turnIds,
      currentTurnId: m.currentTurnId,
    });
    const final = isRunFinal(view.status);
    expect(view.leaseUntil !== null).toBe(view.leaseToken !== null);
    expect(view.endedAt !== null).toBe(final);
    if (view.status === 'failed') expect(view.error).not.toBeNull();
    if (view.error !== null) expect(['failed', 'archived']).toContain(view.status);
    if (view.resumable !== null) expect(['blocked', 'cancelled', 'archived']).toContain(view.status);
    bySession[sessionRunKey(view.sessionId, view.runId)] = { runId: view.runId, status: view.status };
    const { runId, sessionId, status, owner, leaseUntil } = view;
    if (!final) live[runId] = { runId, sessionId, status, owner, leaseUntil };
  }
  expect(dump['runs-by-session'] ?? {}).toEqual(bySession);
  // `live-runs` holds exactly the runs not in a final status, each as its view shows it now.
  expect(dump['live-runs'] ?? {}).toEqual(live);
}

function checkTurns(dump: Dump, models: readonly TurnModel[]) {
  const tracked: Record<string, TurnRunEntry> = {};
  for (const m of models) {
    if (m.tracked && m.state !== 'none') tracked[m.turnId] = { runId: m.run.runId, status: m.state };
  }
  expect(dump['turn-runs'] ?? {}).toEqual(tracked);
}

function checkToolCalls(dump: Dump, models: readonly ToolCallModel[]) {
  const calls = (dump['tool-calls'] ?? {}) as Record<string, ToolCallView>;
  const byTurn: Record<string, string> = {};
  expect(Object.keys(calls).length).toBe(created(models).length);
  for (const m of created(models)) {
    const view = calls[m.toolCallId]!;
    expect(view).toMatchObject({ status: m.state, turnId: m.turnId, stepId: m.stepId });
    expect(view.denial !== null).toBe(view.status === 'denied');
    byTurn[turnToolCallKey(m.turnId, m.stepId, m.toolCallId)] = m.toolCallId;
  }
  expect(dump['tool-calls-by-turn'] ?? {}).toEqual(byTurn);
  // Listed in key order, a turn's calls come in step order: s2 before s10.
  const keys = Object.keys(byTurn).sort();
  for (const [i, key] of keys.entries()) {
    const prev = keys[i - 1];
    if (prev !== undefined && prev.split('/')[0] === key.split('/')[0]) {
      expect(stepNumber(prev)).toBeLessThanOrEqual(stepNumber(key));
    }
  }
}

function checkApprovals(dump: Dump, models: readonly ApprovalModel[]) {
  const approvals = (dump.approvals ?? {}) as Record<string, ApprovalView>;
  const closed = new Set<string>(finalStates(approvalLifecycle));
  const bySession: Record<string, ApprovalEntry> = {};
  const open: Record<string, ApprovalEntry> = {};
  expect(Object.keys(approvals).length).toBe(created(models).length);
  for (const m of created(models)) {
    const view = approvals[m.approvalId]!;
    expect(view).toMatchObject({ sessionId: m.sessionId, status: m.state });
    const entry = { approvalId: view.approvalId, status: view.status, tool: view.tool, expiresAt: view.expiresAt };
    bySession[sessionApprovalKey(view.sessionId, view.approvalId)] = entry;
    if (!closed.has(view.status)) open[view.approvalId] = entry;
  }
  expect(dump['approvals-by-session'] ?? {}).toEqual(bySession);
  // `open-approvals` holds exactly the approvals the machine can still move (requested, granted).
  expect(dump['open-approvals'] ?? {}).toEqual(open);
}

function checkInvariants(dump: Dump, models: Models) {
  checkRuns(dump, models.runs);
  checkTurns(dump, models.turns);
  checkToolCalls(dump, models.toolCalls);
  checkApprovals(dump, models.approvals);
}

const LIFECYCLES: readonly Lifecycle[] = [runLifecycle, turnLifecycle, toolCallLifecycle, approvalLifecycle];

// The in-memory store, or PostgreSQL (a fresh database per run) under the `postgres` project of vitest.config.ts.
const stores = await propertyStores();
afterAll(() => stores.close());

const describeOn = stores.skipped ? describe.skip : describe;

describeOn(`runs projector properties on ${stores.kind}${stores.skipped}`, () => {
  it('equals a rebuild from the log, with exact live runs and open approvals, after any accepted interleaving', async () => {
    const settings = propertySettings(stores.runs({ memory: 100, postgres: 10 }));
    const taken = new Set<string>();
    await fc.assert(
      fc.asyncProperty(steps(12), fc.nat(), async (walkSteps, checkAt) => {
        const clock = createFakeClock();
        const ids = createSeededIdGenerator(clock, 23);
        const store = await stores.open({ projectors: [runsProjector], clock, ids });
        const reader = store.projection('runs');
        const sessions = [ids.next('ses'), ids.next('ses')];
        const runs = new MachineWalk(runWalk(ids, sessions), ids, 2);
        const turns = new MachineWalk(turnWalk(ids, runs.models), ids, 2);
        const toolCalls = new MachineWalk(toolCallWalk(ids, sessions[0]!, [ids.next('trn'), ids.next('trn')]), ids, 2);
        const approvals = new MachineWalk(approvalWalk(ids, sessions), ids, 2);
        // Runs, the deepest machine, get half of the single steps; each walk has two slots.
        const walks = [runs, turns, toolCalls, approvals] as const;
        const walkOfSlot = [0, 0, 0, 1, 2, 3] as const;
        const nextOf = (s: Step, walk: number): WalkEvent<unknown> =>
          walks[walk]!.next({ ...s, slot: Math.floor(s.slot / walkOfSlot.length) }, clock.now());
        const models = {
          runs: runs.models,
          turns: turns.models,
          toolCalls: toolCalls.models,
          approvals: approvals.models,
        };
        const check = async () => {
          const live = await reader.dump();
          checkInvariants(live, models);
          await store.rebuild();
          expect(await reader.dump()).toEqual(live);
        };
        for (const [i, s] of walkSteps.entries()) {
          clock.advance(s.delay);
          // A `prefer` step moves one item of each walk in one atomic append; the others move one item.
          const taking =
            s.mode === 'prefer'
              ? walks.map((_, w) => nextOf(s, w))
              : [nextOf(s, walkOfSlot[s.slot % walkOfSlot.length]!)];
          for (const t of taking) taken.add(`${t.streamType}: ${t.edge}`);
          await store.append(appendStreams(taking));
          if (i === checkAt % walkSteps.length) await check();
        }
        await check();
      }),
      settings,
    );
    // The walks are worth something only if, together, they took every edge of the four machines.
    if (settings.numRuns >= 100) {
      const edges = LIFECYCLES.flatMap((l) =>
        transitionTable(l).map((r) => `${l.streamType}: ${edgeKey(r.from, r.event, r.to)}`),
      );
      expect(edges.filter((e) => !taken.has(e))).toEqual([]);
    }
  });
});
