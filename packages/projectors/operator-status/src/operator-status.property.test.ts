import { createFakeClock, createSeededIdGenerator, propertySettings } from '@demiurge/contracts/testing';
import { propertyStores } from '@demiurge/event-store-postgres/testing';
import {
  allowedEvents,
  deliveryLifecycle,
  type Lifecycle,
  taskLifecycle,
  transitionTable,
  workLifecycle,
} from '@demiurge/lifecycle';
import {
  appendStreams,
  type DeliveryModel,
  deliveryWalk,
  edgeKey,
  MachineWalk,
  type Step,
  steps,
  type TaskModel,
  taskWalk,
  type WalkEvent,
  type WorkModel,
  workWalk,
} from '@demiurge/lifecycle/testing';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  countKey,
  type LastError,
  type OperatorAggregate,
  type OperatorError,
  type OperatorItem,
  type OperatorItemStatus,
  operatorItemKey,
  operatorStatusProjector,
} from './index.js';

type Dump = Record<string, Record<string, unknown>>;

/** One walked item as the operator view should see it. */
interface Expected {
  readonly aggregate: OperatorAggregate;
  readonly id: string;
  readonly kind: string;
  readonly status: OperatorItemStatus;
  readonly sessionId: string | null;
  readonly pending: boolean;
}

const LIFECYCLES: Record<OperatorAggregate, Lifecycle> = {
  work: workLifecycle,
  task: taskLifecycle,
  delivery: deliveryLifecycle,
};
const RUNNING = new Set(['work/claimed', 'work/running', 'work/sending', 'task/active']);
const NEEDS_OPERATOR = new Set(['work/unknown', 'work/corrupt', 'delivery/unknown']);
/** The error an event records, as the walk built it. */
function errorOf(event: WalkEvent<unknown>['event']): OperatorError | undefined {
  const data = event.data as { error?: OperatorError; detail?: string };
  if (event.type === 'work.corrupt') return { code: 'corrupt', message: data.detail! };
  return event.type.endsWith('.failed') ? data.error : undefined;
}

function expected(work: readonly WorkModel[], tasks: readonly TaskModel[], deliveries: readonly DeliveryModel[]) {
  const out: Expected[] = [];
  for (const m of work) {
    if (m.state !== 'none') {
      out.push({ aggregate: 'work', id: m.workId, kind: m.kind, status: m.state, sessionId: null, pending: false });
    }
  }
  for (const m of tasks) {
    if (m.state === 'none') continue;
    const pending = m.completion === 'ready' && m.state !== 'deleted' && m.state !== 'archived';
    out.push({ aggregate: 'task', id: m.taskId, kind: m.kind, status: m.state, sessionId: m.sessionId, pending });
  }
  for (const m of deliveries) {
    if (m.state === 'none') continue;
    const { deliveryId: id, channel: kind, state: status, sessionId } = m;
    out.push({ aggregate: 'delivery', id, kind, status, sessionId, pending: false });
  }
  return out;
}

/** The view's invariants against the walks' own models: items, counts, running, needs-operator, completions. */
function checkInvariants(dump: Dump, items: readonly Expected[], errors: ReadonlyMap<string, OperatorError>) {
  const counts: Record<string, number> = {};
  const running = new Set<string>();
  const needsOperator = new Set<string>();
  const pending = new Set<string>();
  const views = (dump.items ?? {}) as Record<string, OperatorItem>;
  expect(Object.keys(views).length).toBe(items.length);
  for (const e of items) {
    const key = operatorItemKey(e.aggregate, e.id);
    const allowed = allowedEvents(LIFECYCLES[e.aggregate], e.status);
    const lastError = errors.get(key) ?? null;
    expect(views[key]).toMatchObject({ kind: e.kind, status: e.status, sessionId: e.sessionId, allowed, lastError });
    const ck = countKey(e.aggregate, e.kind, e.status);
    counts[ck] = (counts[ck] ?? 0) + 1;
    if (RUNNING.has(`${e.aggregate}/${e.status}`)) running.add(key);
    if (NEEDS_OPERATOR.has(`${e.aggregate}/${e.status}`)) {
      needsOperator.add(key);
      expect(dump['needs-operator']?.[key]).toMatchObject({ status: e.status, allowed });
    }
    if (e.pending) pending.add(e.id);
  }
  // Counts equal the number of items per (aggregate, kind, status); no zero counts are kept.
  expect(dump.counts ?? {}).toEqual(counts);
  expect(Object.keys(dump.running ?? {})).toEqual([...running].sort());
  expect(Object.keys(dump['needs-operator'] ?? {})).toEqual([...needsOperator].sort());
  expect(Object.keys(dump['pending-completions'] ?? {})).toEqual([...pending].sort());
  // The last error is the one recorded last, on any item (`errors` is in recording order).
  const last = [...errors].at(-1);
  const lastDoc = dump['last-error']?.last as LastError | undefined;
  expect(lastDoc && [operatorItemKey(lastDoc.aggregate, lastDoc.id), lastDoc.error]).toEqual(last);
}

// The in-memory store, or PostgreSQL (a fresh database per run) under the `postgres` project of vitest.config.ts.
const stores = await propertyStores();
afterAll(() => stores.close());

const describeOn = stores.skipped ? describe.skip : describe;

describeOn(`operator-status projector properties on ${stores.kind}${stores.skipped}`, () => {
  it('equals a rebuild from the log, with exact counts and lists, after any accepted interleaving', async () => {
    const settings = propertySettings(stores.runs({ memory: 100, postgres: 10 }));
    const taken = new Set<string>();
    await fc.assert(
      fc.asyncProperty(steps(8), fc.nat(), async (walkSteps, checkAt) => {
        const clock = createFakeClock();
        const ids = createSeededIdGenerator(clock, 19);
        const store = await stores.open({ projectors: [operatorStatusProjector], clock, ids });
        const reader = store.projection('operator-status');
        const sessions = [ids.next('ses'), ids.next('ses')];
        const work = new MachineWalk(workWalk, ids, 2);
        const tasks = new MachineWalk(taskWalk(ids, sessions), ids, 2);
        const deliveries = new MachineWalk(deliveryWalk(ids, sessions), ids, 2);
        // Work items, the deepest machine, get half of the single steps; each walk has two slots.
        const walks = [work, tasks, deliveries] as const;
        const walkOfSlot = [0, 0, 1, 2] as const;
        const nextOf = (s: Step, walk: number): WalkEvent<unknown> =>
          walks[walk]!.next({ ...s, slot: Math.floor(s.slot / walkOfSlot.length) }, clock.now());
        const errors = new Map<string, OperatorError>();
        const check = async () => {
          const live = await reader.dump();
          checkInvariants(live, expected(work.models, tasks.models, deliveries.models), errors);
          await store.rebuild();
          expect(await reader.dump()).toEqual(live);
        };
        for (const [i, s] of walkSteps.entries()) {
          clock.advance(s.delay);
          // A `prefer` step moves one item of each aggregate in one atomic append (a delivery intent is
          // delivery.queued + work.enqueued in one commit); the others move one item.
          const taking =
            s.mode === 'prefer'
              ? [0, 1, 2].map((w) => nextOf(s, w))
              : [nextOf(s, walkOfSlot[s.slot % walkOfSlot.length]!)];
          for (const t of taking) {
            taken.add(`${t.streamType}: ${t.edge}`);
            const error = errorOf(t.event);
            const key = operatorItemKey(t.streamType as OperatorAggregate, t.streamId);
            if (error) {
              errors.delete(key); // re-inserted last: the map keeps recording order
              errors.set(key, error);
            }
          }
          await store.append(appendStreams(taking));
          if (i === checkAt % walkSteps.length) await check();
        }
        await check();
      }),
      settings,
    );
    // The walks are worth something only if, together, they took every edge of the three machines.
    if (settings.numRuns >= 100) {
      const edges = [workLifecycle, taskLifecycle, deliveryLifecycle].flatMap((l) =>
        transitionTable(l).map((r) => `${l.streamType}: ${edgeKey(r.from, r.event, r.to)}`),
      );
      expect(edges.filter((e) => !taken.has(e))).toEqual([]);
    }
  });
});
