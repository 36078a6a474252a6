import { allowedEvents, runLifecycle } from '@demiurge/lifecycle';
import { describe, expect, it } from 'vitest';
import { setup, T0 } from '../test/setup.js';
import {
  FINAL_RUN_STATUSES,
  type LiveRunEntry,
  RunsCollections,
  type RunView,
  type SessionRunEntry,
  sessionPrefix,
} from './index.js';

describe('runs projector: runs', () => {
  it('follows a run from queued to a resumable cancel, with its owner, checkpoint, reasons and turns', async () => {
    const { ids, clock, reader, sessionId, append, run, queue } = setup();
    const runId = await queue();
    expect(await reader.get<RunView>(RunsCollections.runs, runId)).toEqual({
      runId,
      sessionId,
      status: 'queued',
      owner: null,
      leaseToken: null,
      leaseUntil: null,
      stage: null,
      lastCheckpointId: null,
      turnIds: [],
      currentTurnId: null,
      reason: null,
      resumable: null,
      error: null,
      createdAt: T0,
      updatedAt: T0,
      endedAt: null,
    });
    expect(await reader.get<LiveRunEntry>(RunsCollections.liveRuns, runId)).toEqual({
      runId,
      sessionId,
      status: 'queued',
      owner: null,
      leaseUntil: null,
    });

    clock.advance(1000);
    await run(
      runId,
      { type: 'run.started', data: { runId, owner: 'host-a' } },
      {
        type: 'run.owner_claimed',
        data: { runId, owner: 'host-a', leaseToken: 'l1', leaseUntil: '2026-01-01T00:00:31Z' },
      },
      { type: 'run.checkpointed', data: { runId, checkpointId: 'cp1', stage: 'plan' } },
    );
    const first = ids.next('trn');
    await append('turn', first, { type: 'turn.started', data: { turnId: first, sessionId, runId } });
    expect(await reader.get<RunView>(RunsCollections.runs, runId)).toMatchObject({
      status: 'running',
      owner: 'host-a',
      leaseToken: 'l1',
      leaseUntil: '2026-01-01T00:00:31.000Z',
      stage: 'plan',
      lastCheckpointId: 'cp1',
      turnIds: [first],
      currentTurnId: first,
      updatedAt: '2026-01-01T00:00:01.000Z',
    });
    expect(await reader.get<LiveRunEntry>(RunsCollections.liveRuns, runId)).toEqual({
      runId,
      sessionId,
      status: 'running',
      owner: 'host-a',
      leaseUntil: '2026-01-01T00:00:31.000Z',
    });

    await append('turn', first, { type: 'turn.completed', data: { turnId: first, sessionId } });
    await run(runId, { type: 'run.waiting', data: { runId, reason: 'user input' } });
    expect(await reader.get<RunView>(RunsCollections.runs, runId)).toMatchObject({
      status: 'waiting',
      reason: 'user input',
      turnIds: [first],
      currentTurnId: null,
    });

    const second = ids.next('trn');
    await run(runId, { type: 'run.resumed', data: { runId, checkpointId: 'cp1' } });
    await append('turn', second, { type: 'turn.started', data: { turnId: second, sessionId, runId } });
    expect(await reader.get<RunView>(RunsCollections.runs, runId)).toMatchObject({
      status: 'running',
      reason: null,
      lastCheckpointId: 'cp1',
      turnIds: [first, second],
      currentTurnId: second,
    });

    await run(runId, { type: 'run.cancel_requested', data: { runId, reason: 'user stop' } });
    await append('turn', second, { type: 'turn.cancelled', data: { turnId: second, sessionId, reason: 'run stop' } });
    expect(await reader.get<RunView>(RunsCollections.runs, runId)).toMatchObject({
      status: 'cancelling',
      reason: 'user stop',
      currentTurnId: null,
      endedAt: null,
    });
    expect(await reader.get<LiveRunEntry>(RunsCollections.liveRuns, runId)).toMatchObject({ status: 'cancelling' });

    clock.advance(1000);
    await run(runId, { type: 'run.cancelled', data: { runId, reason: 'user stop', resumable: true } });
    expect(await reader.get<RunView>(RunsCollections.runs, runId)).toMatchObject({
      status: 'cancelled',
      owner: 'host-a',
      leaseToken: null,
      leaseUntil: null,
      stage: 'plan',
      reason: 'user stop',
      resumable: true,
      turnIds: [first, second],
      endedAt: '2026-01-01T00:00:02.000Z',
    });
    expect(await reader.list(RunsCollections.liveRuns)).toEqual([]);
    expect(
      await reader.list<SessionRunEntry>(RunsCollections.runsBySession, { prefix: sessionPrefix(sessionId) }),
    ).toEqual([{ runId, status: 'cancelled' }]);

    // Archiving keeps the outcome; a second cancel is refused by the machine and changes nothing.
    await run(runId, { type: 'run.archived', data: { runId } });
    const archived = await reader.dump();
    expect(archived.runs?.[runId]).toMatchObject({
      status: 'archived',
      resumable: true,
      endedAt: '2026-01-01T00:00:02.000Z',
    });
    await run(runId, { type: 'run.cancelled', data: { runId, reason: 'again', resumable: false } });
    expect(await reader.dump()).toEqual(archived);
  });

  it('extends and expires only the current lease, and clears the reason and resumable when a run resumes', async () => {
    const { reader, run, queue } = setup();
    const runId = await queue();
    const lease = (type: string, owner: string, leaseToken: string, leaseUntil?: string) => ({
      type,
      data: { runId, owner, leaseToken, ...(leaseUntil ? { leaseUntil } : {}) },
    });
    await run(
      runId,
      lease('run.owner_claimed', 'host-a', 'l1', '2026-01-01T00:00:30.000Z'),
      lease('run.owner_lease_expired', 'host-a', 'l1'),
      lease('run.owner_claimed', 'host-b', 'l2', '2026-01-01T00:01:00.000Z'),
      // Stale: the heartbeat and expiry of host-a's old lease do not touch host-b's.
      lease('run.owner_heartbeat', 'host-a', 'l1', '2026-01-01T00:09:00.000Z'),
      lease('run.owner_lease_expired', 'host-a', 'l1'),
    );
    expect(await reader.get<RunView>(RunsCollections.runs, runId)).toMatchObject({
      status: 'queued',
      owner: 'host-b',
      leaseToken: 'l2',
      leaseUntil: '2026-01-01T00:01:00.000Z',
    });

    await run(
      runId,
      { type: 'run.started', data: { runId, owner: 'host-b' } },
      lease('run.owner_heartbeat', 'host-b', 'l2', '2026-01-01T00:02:00.000Z'),
      { type: 'run.blocked', data: { runId, reason: 'approval', resumable: true } },
    );
    expect(await reader.get<RunView>(RunsCollections.runs, runId)).toMatchObject({
      status: 'blocked',
      leaseToken: 'l2',
      leaseUntil: '2026-01-01T00:02:00.000Z',
      reason: 'approval',
      resumable: true,
    });
    // The owner's lease ran out: the live run has no owner until another host claims it.
    await run(runId, lease('run.owner_lease_expired', 'host-b', 'l2'));
    expect(await reader.get<LiveRunEntry>(RunsCollections.liveRuns, runId)).toMatchObject({
      status: 'blocked',
      owner: null,
      leaseUntil: null,
    });

    await run(
      runId,
      { type: 'run.resumed', data: { runId } },
      { type: 'run.failed', data: { runId, error: { code: 'provider', message: 'model down' } } },
    );
    expect(await reader.get<RunView>(RunsCollections.runs, runId)).toMatchObject({
      status: 'failed',
      reason: null,
      resumable: null,
      error: { code: 'provider', message: 'model down' },
      endedAt: T0,
    });
    expect(await reader.get(RunsCollections.liveRuns, runId)).toBeUndefined();
  });

  it('ignores turns without a known run, and events of runs never queued', async () => {
    const { ids, reader, sessionId, append, run } = setup();
    const ghost = ids.next('run');
    const loose = ids.next('trn');
    const orphan = ids.next('trn');
    await run(ghost, { type: 'run.started', data: { runId: ghost, owner: 'host-a' } });
    await append('turn', loose, { type: 'turn.started', data: { turnId: loose, sessionId } });
    await append('turn', orphan, { type: 'turn.started', data: { turnId: orphan, sessionId, runId: ghost } });
    await append('turn', orphan, {
      type: 'turn.failed',
      data: { turnId: orphan, sessionId, error: { code: 'provider', message: 'down' } },
    });
    expect(await reader.dump()).toEqual({});
  });

  it('counts as final exactly the statuses the run machine lets out only to run.archived', () => {
    const final = runLifecycle.states.filter(
      (s) => s !== 'none' && allowedEvents(runLifecycle, s).every((e) => e === 'run.archived'),
    );
    expect([...FINAL_RUN_STATUSES].sort()).toEqual(final.sort());
  });
});
