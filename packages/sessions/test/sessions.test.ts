import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFakeClock, createSeededIdGenerator } from '@demiurge/contracts/testing';
import { controlPlaneProjectors, DurableWorkRuntime, RuntimeControlPlane } from '@demiurge/control-plane';
import type { EventStore } from '@demiurge/event-store';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { IllegalTransitionError, verifyLog } from '@demiurge/lifecycle';
import { sessionsProjector } from '@demiurge/projector-sessions';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ADMIN_CLI_ACTOR,
  loadRun,
  mayCancelRun,
  RunNotOwnedError,
  RunNotResumableError,
  RunRuntime,
  SessionRuntime,
  StaleRunLeaseError,
  TurnAdmission,
} from '../src/index.js';

let dir: string;
let store: EventStore;
const clock = createFakeClock(Date.parse('2026-06-01T10:00:00.000Z'));
const ids = createSeededIdGenerator(clock, 7);

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'demiurge-sessions-'));
  store = await openSqliteEventStore({
    path: join(dir, 'store.sqlite3'),
    projectors: [sessionsProjector, ...controlPlaneProjectors],
    clock,
    ids,
  });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('SessionRuntime', () => {
  it('creates, renames, switches plan mode and archives; an archived session takes no messages', async () => {
    const sessions = new SessionRuntime({ store, ids });
    const s = await sessions.create({ title: 'first', coreId: 'default' });
    expect(s).toMatchObject({ status: 'active', mode: 'default', busyMode: 'queue' });
    await sessions.update(s.sessionId, 'renamed');
    expect((await sessions.setMode(s.sessionId, 'plan')).mode).toBe('plan');
    const before = (await store.readAll()).length;
    await sessions.setMode(s.sessionId, 'plan'); // already plan: nothing appended
    expect((await store.readAll()).length).toBe(before);
    await sessions.archive(s.sessionId, 'done');
    await sessions.archive(s.sessionId, 'done again'); // repeat: no-op
    await expect(sessions.recordMessage({ sessionId: s.sessionId, role: 'user', text: 'late' })).rejects.toBeInstanceOf(
      IllegalTransitionError,
    );
    expect((await sessions.get(s.sessionId)).title).toBe('renamed');
    expect((await verifyLog(store.iterate())).violations).toEqual([]);
  });

  it('resolves one session per (core, channel, conversation key), also under concurrent callers', async () => {
    const sessions = new SessionRuntime({ store, ids });
    const binding = { coreId: 'default', channel: 'webhook', conversationKey: 'room-1' };
    const results = await Promise.all([1, 2, 3, 4].map(() => sessions.resolve(binding)));
    expect(new Set(results.map((r) => r.session.sessionId)).size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    const other = await sessions.resolve({ ...binding, conversationKey: 'room-2' });
    expect(other.session.sessionId).not.toBe(results[0]!.session.sessionId);
    expect((await store.readAll()).filter((e) => e.type === 'session.created')).toHaveLength(2);
  });

  it('keeps history by policy: model_hidden for people only, transient never kept', async () => {
    const sessions = new SessionRuntime({ store, ids });
    const { sessionId } = await sessions.create({ title: 't', coreId: 'default' });
    await sessions.recordMessage({ sessionId, role: 'user', text: 'kept' });
    await sessions.recordMessage({ sessionId, role: 'system', text: 'operator note', visibility: 'model_hidden' });
    await sessions.recordMessage({ sessionId, role: 'assistant', text: 'typing…', visibility: 'transient' });
    expect((await sessions.history(sessionId)).map((m) => m.text)).toEqual(['kept', 'operator note']);
    expect((await sessions.history(sessionId, { forModel: true })).map((m) => m.text)).toEqual(['kept']);
  });

  it('refuses bad input with errors naming what was wrong, appending nothing', async () => {
    const sessions = new SessionRuntime({ store, ids });
    await expect(sessions.create({ title: '', coreId: 'default' })).rejects.toThrow(/invalid session spec: title/);
    await expect(sessions.get('ses_01JD5Y7Q6N0000000000000009')).rejects.toThrow(/no session ses_/);
    await expect(sessions.setMode('ses_01JD5Y7Q6N0000000000000009', 'plan')).rejects.toThrow(/no session/);
    await expect(sessions.setMode('x', 'loud' as never)).rejects.toThrow(/invalid session mode/);
    expect(await store.readAll()).toEqual([]);
  });
});

describe('RunRuntime', () => {
  const setup = () => {
    const work = new DurableWorkRuntime({ store, clock, ids, owner: 'h1' });
    const controlPlane = new RuntimeControlPlane({ store, clock, ids, work });
    const runs = new RunRuntime({ store, clock, ids, owner: 'h1', leaseMs: 10_000, controlPlane });
    return { runs, controlPlane, sessions: new SessionRuntime({ store, ids }) };
  };

  it('fences owner writes by lease and lets a second host take over only after the lease expires', async () => {
    const { runs, sessions } = setup();
    const { sessionId } = await sessions.create({ title: 't', coreId: 'default' });
    const start = runs.startStream(sessionId);
    await store.append(start.stream);
    const other = new RunRuntime({ store, clock, ids, owner: 'h2', leaseMs: 10_000 });
    await expect(other.claimOwnership(start.runId)).rejects.toBeInstanceOf(StaleRunLeaseError);
    const lease = await runs.heartbeat(start.lease);
    clock.advance(11_000);
    const taken = await other.claimOwnership(start.runId);
    expect(taken.leaseToken).not.toBe(lease.leaseToken);
    // The old owner's token is refused, and nothing was appended.
    const before = (await store.readAll()).length;
    await expect(runs.heartbeat(lease)).rejects.toBeInstanceOf(StaleRunLeaseError);
    expect((await store.readAll()).length).toBe(before);
    expect((await runs.get(start.runId)).owner).toBe('h2');
  });

  it('cancel cancels the run’s child tasks before the run ends; repeats are no-ops', async () => {
    const { runs, sessions, controlPlane } = setup();
    const { sessionId } = await sessions.create({ title: 't', coreId: 'default' });
    const start = runs.startStream(sessionId);
    await store.append(start.stream);
    const task = await controlPlane.submitTask({
      sessionId,
      runId: start.runId,
      kind: 'terminal.exec',
      title: 'child',
      input: { command: 'true' },
    });
    await runs.requestCancel(start.runId, 'stop');
    await runs.requestCancel(start.runId, 'stop again');
    await runs.finishCancel(start.runId, { reason: 'stop', resumable: false });
    expect((await runs.get(start.runId)).state).toBe('cancelled');
    expect((await controlPlane.getTask({ sessionId, taskId: task.taskId })).status).toBe('cancelled');
    const types = (await store.readAll()).map((e) => e.type);
    expect(types.indexOf('task.cancelled')).toBeLessThan(types.indexOf('run.cancelled'));
    expect(types.filter((t) => t === 'run.cancel_requested')).toHaveLength(1);
    await expect(runs.resume(start.runId)).rejects.toBeInstanceOf(RunNotResumableError);
    expect((await verifyLog(store.iterate())).violations).toEqual([]);
  });

  it('a blocked run resumes only when resumable', async () => {
    const { runs, sessions } = setup();
    const { sessionId } = await sessions.create({ title: 't', coreId: 'default' });
    const a = runs.startStream(sessionId);
    const b = runs.startStream(sessionId);
    await store.append([a.stream, b.stream]);
    await runs.block(a.runId, 'provider quota', true);
    await runs.block(b.runId, 'policy: forbidden', false);
    await runs.resume(a.runId);
    expect((await runs.get(a.runId)).state).toBe('running');
    await expect(runs.resume(b.runId)).rejects.toThrow(/blocked and not resumable \(policy: forbidden\)/);
  });
});

describe('TurnAdmission', () => {
  it('serializes per session in arrival order and runs sessions concurrently', async () => {
    const admission = new TurnAdmission();
    const order: string[] = [];
    const step = (name: string, ms: number) => async () => {
      order.push(`${name}+`);
      await new Promise((r) => setTimeout(r, ms));
      order.push(`${name}-`);
    };
    await Promise.all([
      admission.run('a', step('a1', 30)),
      admission.run('a', step('a2', 1)),
      admission.run('b', step('b1', 5)),
    ]);
    expect(order.indexOf('a1-')).toBeLessThan(order.indexOf('a2+'));
    expect(order.indexOf('b1+')).toBeLessThan(order.indexOf('a1-'));
    expect(admission.isBusy('a')).toBe(false);
  });
});

describe('run ownership (seed scenario 55)', () => {
  it('mayCancelRun: the starter, the host, the admin CLI, a model of the same session; nobody else', () => {
    const alice = { kind: 'operator', id: 'tui-alice' } as const;
    expect(mayCancelRun(alice, 'ses_1', alice)).toBe(true);
    expect(mayCancelRun(alice, 'ses_1', { kind: 'system', id: 'host' })).toBe(true);
    expect(mayCancelRun(alice, 'ses_1', ADMIN_CLI_ACTOR)).toBe(true);
    expect(mayCancelRun(alice, 'ses_1', { kind: 'agent', id: 'ses_1' })).toBe(true);
    expect(mayCancelRun(alice, 'ses_1', { kind: 'agent', id: 'ses_2' })).toBe(false);
    expect(mayCancelRun(alice, 'ses_1', { kind: 'operator', id: 'tui-mallory' })).toBe(false);
    expect(mayCancelRun(alice, 'ses_1', { kind: 'user', id: 'tui-alice' })).toBe(false);
    expect(mayCancelRun({ kind: 'schedule', id: 'daily' }, 'ses_1', alice)).toBe(false);
    expect(mayCancelRun({ kind: 'agent', id: 'ses_parent' }, 'ses_child', { kind: 'agent', id: 'ses_parent' })).toBe(
      true,
    );
    expect(mayCancelRun(null, 'ses_1', { kind: 'operator', id: 'anyone' })).toBe(true);
  });

  it('requestCancel by a principal that does not own the run is refused, typed, and writes nothing', async () => {
    const runs = new RunRuntime({ store, clock, ids, owner: 'h1' });
    const sessions = new SessionRuntime({ store, ids });
    const { sessionId } = await sessions.create({ title: 't', coreId: 'default' });
    const start = runs.startStream(sessionId, { kind: 'operator', id: 'tui-alice' });
    await store.append(start.stream);
    expect((await runs.get(start.runId)).principal).toEqual({ kind: 'operator', id: 'tui-alice' });
    const before = (await store.readAll()).length;
    const refused = await runs
      .requestCancel(start.runId, 'stop', { kind: 'operator', id: 'tui-mallory' })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RunNotOwnedError);
    expect(refused).toMatchObject({ code: 'not_owner', runId: start.runId });
    expect((await store.readAll()).length).toBe(before);
    await runs.requestCancel(start.runId, 'stop', { kind: 'operator', id: 'tui-alice' });
    const requested = (await store.readAll()).find((e) => e.type === 'run.cancel_requested')!;
    expect(requested.meta.actor).toEqual({ kind: 'operator', id: 'tui-alice' });
  });
});

describe('loadRun (the one run fold, shared with the runs projector)', () => {
  it('a heartbeat or an expiry naming a stale lease token changes nothing', async () => {
    const runId = ids.next('run');
    const sessionId = ids.next('ses');
    const until = (s: number) => new Date(Date.parse('2026-06-01T10:00:00.000Z') + s * 1000).toISOString();
    const run = (events: { type: string; data: Record<string, unknown> }[]) =>
      events.map((e) => ({ type: e.type, data: { runId, ...e.data } }));
    await store.append([
      {
        streamType: 'run',
        streamId: runId,
        expectedVersion: 'no_stream',
        events: run([
          { type: 'run.queued', data: { sessionId } },
          { type: 'run.started', data: { owner: 'host-a' } },
          { type: 'run.owner_claimed', data: { owner: 'host-a', leaseToken: 'rls_a', leaseUntil: until(30) } },
          { type: 'run.owner_lease_expired', data: { owner: 'host-a', leaseToken: 'rls_a' } },
          { type: 'run.owner_claimed', data: { owner: 'host-b', leaseToken: 'rls_b', leaseUntil: until(60) } },
          // host-a, not knowing it lost the run, heartbeats with its old token, then "expires" it
          { type: 'run.owner_heartbeat', data: { owner: 'host-a', leaseToken: 'rls_a', leaseUntil: until(90) } },
          { type: 'run.owner_lease_expired', data: { owner: 'host-a', leaseToken: 'rls_a' } },
        ]),
      },
    ]);
    const loaded = await loadRun(store, runId);
    expect(loaded).toMatchObject({
      state: 'running',
      sessionId,
      owner: 'host-b',
      leaseToken: 'rls_b',
      leaseUntil: until(60),
      version: 7,
    });
    // the current token still extends it
    await store.append([
      {
        streamType: 'run',
        streamId: runId,
        expectedVersion: 7,
        events: run([
          { type: 'run.owner_heartbeat', data: { owner: 'host-b', leaseToken: 'rls_b', leaseUntil: until(120) } },
        ]),
      },
    ]);
    expect(await loadRun(store, runId)).toMatchObject({ owner: 'host-b', leaseToken: 'rls_b', leaseUntil: until(120) });
  });
});
