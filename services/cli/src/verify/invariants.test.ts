import type { EventStore, ListOptions, ProjectionReader } from '@demiurge/event-store';
import { describe, expect, it } from 'vitest';
import { checkInvariants, Invariant } from './invariants.js';

type Dump = Record<string, Record<string, unknown>>;

/** A store whose projections are fixed documents: enough for `checkInvariants`, which only reads. */
function storeOf(projections: Record<string, Dump>): EventStore {
  const reader = (dump: Dump): ProjectionReader => {
    const entries = <T>(collection: string, o?: ListOptions) =>
      Object.entries(dump[collection] ?? {})
        .filter(([id]) => !o?.prefix || id.startsWith(o.prefix))
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([id, doc]) => ({ id, doc: doc as T }));
    return {
      get: async <T>(collection: string, id: string) => dump[collection]?.[id] as T | undefined,
      list: async <T>(collection: string, o?: ListOptions) => entries<T>(collection, o).map((e) => e.doc),
      entries: async <T>(collection: string, o?: ListOptions) => entries<T>(collection, o),
      dump: async () => dump,
      counts: async () => Object.fromEntries(Object.entries(dump).map(([c, docs]) => [c, Object.keys(docs).length])),
      checkpoint: async () => ({ name: 'fixture', version: 1, position: 0 }),
    };
  };
  return { projection: (name: string) => reader(projections[name] ?? {}) } as unknown as EventStore;
}

const NOW = Date.parse('2030-01-01T00:00:00.000Z');
const task = (taskId: string, status: string, extra: Record<string, unknown> = {}) => ({
  taskId,
  sessionId: 'ses_1',
  runId: null,
  status,
  lane: { created: 'active', active: 'active', cancelled: 'done', deleted: null, blocked: 'blocked' }[status] ?? null,
  hidden: status === 'deleted',
  blocked: null,
  ...extra,
});
const run = (runId: string, status: string, extra: Record<string, unknown> = {}) => ({
  runId,
  sessionId: 'ses_1',
  status,
  owner: 'host-1',
  leaseUntil: '2030-01-01T00:00:30.000Z',
  ...extra,
});

describe('checkInvariants', () => {
  it('finds nothing on consistent projections', async () => {
    const store = storeOf({
      'task-board': {
        tasks: { t1: task('t1', 'active', { runId: 'r1' }), t2: task('t2', 'cancelled'), t3: task('t3', 'deleted') },
        board: { 'ses_1/active/t1': { taskId: 't1', lane: 'active' }, 'ses_1/done/t2': { taskId: 't2', lane: 'done' } },
        'by-session': { 'ses_1/t3': { taskId: 't3', status: 'deleted', hidden: true } },
      },
      runs: { runs: { r1: run('r1', 'running') }, 'live-runs': { r1: run('r1', 'running') } },
    });
    expect(await checkInvariants(store, NOW)).toEqual([]);
  });

  it('reports a cancelled task left in the active lane and a deleted task that is not hidden', async () => {
    const store = storeOf({
      'task-board': {
        tasks: { t2: task('t2', 'cancelled', { lane: 'active' }), t3: task('t3', 'deleted', { hidden: false }) },
        board: { 'ses_1/active/t2': { taskId: 't2', lane: 'active' }, 'ses_1/done/t3': { taskId: 't3', lane: 'done' } },
        'by-session': { 'ses_1/t3': { taskId: 't3', status: 'deleted', hidden: false } },
      },
    });
    expect(await checkInvariants(store, NOW)).toEqual([
      {
        invariant: Invariant.endedTasksLeaveActiveLanes,
        subject: 't2',
        message: 'task t2 is cancelled but its lane is active',
      },
      {
        invariant: Invariant.endedTasksLeaveActiveLanes,
        subject: 't2',
        message: 'task t2 is cancelled but is on the board in the active lane (board/ses_1/active/t2)',
      },
      { invariant: Invariant.deletedTasksHidden, subject: 't3', message: 'task t3 is deleted but not hidden' },
      {
        invariant: Invariant.deletedTasksHidden,
        subject: 't3',
        message: 'task t3 is deleted but still on the board (board/ses_1/done/t3)',
      },
      {
        invariant: Invariant.deletedTasksHidden,
        subject: 't3',
        message: 'task t3 is deleted but its session lists it as visible (by-session/ses_1/t3)',
      },
    ]);
  });

  it('reports tasks a terminal run left unable to progress, not detached tasks that run on', async () => {
    const store = storeOf({
      'task-board': {
        tasks: {
          t1: task('t1', 'active', { runId: 'r1' }),
          t2: task('t2', 'blocked', { runId: 'r1', blocked: { reason: 'x', resumable: false } }),
          t3: task('t3', 'blocked', { runId: 'r1', blocked: { reason: 'x', resumable: true } }),
          t4: task('t4', 'waiting', { runId: 'r1' }),
          t5: task('t5', 'active', { runId: 'r2' }),
          t6: task('t6', 'waiting', { runId: 'r2' }),
        },
      },
      runs: {
        runs: {
          r1: run('r1', 'completed', { leaseUntil: null }),
          r2: run('r2', 'cancelled', { leaseUntil: null }),
        },
      },
    });
    expect((await checkInvariants(store, NOW)).map((f) => f.message)).toEqual([
      'task t2 is blocked and not resumable but its run r1 is completed',
      'task t5 is active but its run r2 is cancelled',
      'task t6 is waiting but its run r2 is cancelled',
    ]);
  });

  it('reports live runs without an owner or whose owner lease expired; a paused run needs no owner', async () => {
    const runs = {
      r1: run('r1', 'running', { owner: null, leaseUntil: null }),
      r2: run('r2', 'waiting', { leaseUntil: '2029-12-31T23:59:00.000Z' }),
      r3: run('r3', 'running'),
      r4: run('r4', 'paused', { leaseUntil: '2029-12-31T23:59:00.000Z' }),
      r5: run('r5', 'paused', { owner: null, leaseUntil: null }),
    };
    const store = storeOf({ runs: { runs, 'live-runs': runs } });
    expect(await checkInvariants(store, NOW)).toEqual([
      {
        invariant: Invariant.liveRunsHaveAnOwner,
        subject: 'r1',
        message: 'run r1 is running and has no owner (waiting for recovery)',
      },
      {
        invariant: Invariant.liveRunsHaveAnOwner,
        subject: 'r2',
        message:
          "run r2 is waiting but its owner host-1's lease expired at 2029-12-31T23:59:00.000Z (a host must recover it)",
      },
    ]);
  });
});
