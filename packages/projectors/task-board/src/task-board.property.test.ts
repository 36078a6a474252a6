import { createFakeClock, createSeededIdGenerator, propertySettings } from '@demiurge/contracts/testing';
import { propertyStores } from '@demiurge/event-store-postgres/testing';
import { allowedEvents, taskLifecycle, transitionTable } from '@demiurge/lifecycle';
import { appendStreams, edgeKey, MachineWalk, steps, type TaskModel, taskWalk } from '@demiurge/lifecycle/testing';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  boardKey,
  LOG_TAIL_LINES,
  laneOf,
  type SessionTaskEntry,
  sessionTaskKey,
  type TaskView,
  taskBoardProjector,
} from './index.js';

type Dump = Record<string, Record<string, unknown>>;

/** The read model's invariants, against the walk's own model of each task. */
function checkInvariants(dump: Dump, models: readonly TaskModel[]) {
  const tasks = (dump.tasks ?? {}) as Record<string, TaskView>;
  const board = new Set<string>();
  const bySession: Record<string, SessionTaskEntry> = {};
  expect(Object.keys(tasks).length).toBe(models.filter((m) => m.state !== 'none').length);
  for (const m of models) {
    const view = tasks[m.taskId];
    if (m.state === 'none' || !view) {
      expect([m.state, view]).toEqual(['none', undefined]);
      continue;
    }
    expect(view).toMatchObject({
      status: m.state,
      kind: m.kind,
      sessionId: m.sessionId,
      hidden: m.deleted,
      completion: m.completion,
    });
    expect(view.lane).toBe(laneOf(view.status));
    expect(view.allowed).toEqual(allowedEvents(taskLifecycle, view.status));
    expect(view.blocked !== null).toBe(view.status === 'blocked');
    expect(view.logTail.map((l) => ({ stream: l.stream, text: l.text }))).toEqual(m.logs.slice(-LOG_TAIL_LINES));
    // A deleted task is in no lane, ever; cancelled tasks are only in `done`.
    if (m.deleted) expect(view.lane).toBeNull();
    if (view.status === 'cancelled') expect(view.lane).toBe('done');
    if (view.lane !== null) board.add(boardKey(view.sessionId, view.lane, view.taskId));
    bySession[sessionTaskKey(view.sessionId, view.taskId)] = {
      taskId: view.taskId,
      status: view.status,
      hidden: view.hidden,
    };
  }
  expect(Object.keys(dump.board ?? {})).toEqual([...board].sort());
  expect(dump['by-session'] ?? {}).toEqual(bySession);
}

// The in-memory store, or PostgreSQL (a fresh database per run) under the `postgres` project of vitest.config.ts.
const stores = await propertyStores();
afterAll(() => stores.close());

const describeOn = stores.skipped ? describe.skip : describe;

describeOn(`task-board projector properties on ${stores.kind}${stores.skipped}`, () => {
  it('equals a rebuild from the log, with exact lanes and tails, after any accepted interleaving of tasks', async () => {
    const settings = propertySettings(stores.runs({ memory: 100, postgres: 10 }));
    const taken = new Set<string>();
    let longestTail = 0;
    await fc.assert(
      fc.asyncProperty(steps(3), fc.nat(), async (walkSteps, checkAt) => {
        const clock = createFakeClock();
        const ids = createSeededIdGenerator(clock, 13);
        const store = await stores.open({ projectors: [taskBoardProjector], clock, ids });
        const reader = store.projection('task-board');
        const walk = new MachineWalk(taskWalk(ids, [ids.next('ses'), ids.next('ses')]), ids, 3);
        for (const [i, s] of walkSteps.entries()) {
          clock.advance(s.delay);
          // A `prefer` step is a burst of up to 25 log lines, appended in one commit.
          const burst = s.mode === 'prefer' ? 1 + (s.variant % 25) : 1;
          const taking = Array.from({ length: burst }, () => walk.next(s, clock.now()));
          for (const { edge } of taking) taken.add(edge);
          await store.append(appendStreams(taking));
          if (i === checkAt % walkSteps.length) {
            const live = await reader.dump();
            checkInvariants(live, walk.models);
            await store.rebuild();
            expect(await reader.dump()).toEqual(live);
          }
        }
        const live = await reader.dump();
        checkInvariants(live, walk.models);
        longestTail = Math.max(longestTail, ...walk.models.map((m) => m.logs.length));
        await store.rebuild();
        expect(await reader.dump()).toEqual(live);
      }),
      settings,
    );
    // The walks are worth something only if, together, they took every edge and overflowed a tail.
    if (settings.numRuns >= 100) {
      const edges = transitionTable(taskLifecycle).map((r) => edgeKey(r.from, r.event, r.to));
      expect(edges.filter((e) => !taken.has(e))).toEqual([]);
      expect(longestTail).toBeGreaterThan(LOG_TAIL_LINES);
    }
  });
});
