import { createSeededIdGenerator } from '@demiurge/contracts/testing';
import { StreamVersionConflictError } from '@demiurge/event-store';
import { IllegalTransitionError } from '@demiurge/lifecycle';
import { RunRuntime, StaleRunLeaseError } from '@demiurge/sessions';
import { afterEach, describe, expect, it } from 'vitest';
import type { TurnEngineLogger } from '../src/index.js';
import { type Harness, openHarness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('the logger port', () => {
  it('a heartbeat that finds the run taken over stops the drive and is reported, not swallowed', async () => {
    const reports: { level: string; message: string; context?: Record<string, unknown> }[] = [];
    const logger: TurnEngineLogger = {
      warn: (message, context) => reports.push({ level: 'warn', message, ...(context ? { context } : {}) }),
      error: (message, context) => reports.push({ level: 'error', message, ...(context ? { context } : {}) }),
    };
    h = await openHarness({
      script: [{ tool_calls: [{ name: 'shell', arguments: { command: 'sleep 30' } }] }, { content: 'never' }],
      runLeaseMs: 3_000, // a heartbeat every second
      logger,
    });
    const other = new RunRuntime({
      store: h.store,
      clock: h.clock,
      ids: createSeededIdGenerator(h.clock, 99),
      owner: 'other-host',
    });
    const { sessionId } = await h.sessions.create({ title: 't', coreId: 'default' });
    let runId = '';
    const sub = h.store.events$.subscribe((event) => {
      if (event.type !== 'tool_call.process_started') return;
      runId = event.meta.runId as string;
      // Another host takes the run over (it judged this owner dead).
      void other.claimOwnership(runId, { ownerDead: true });
    });
    const started = Date.now();
    await expect(h.engine.runTurn({ sessionId, text: 'go' })).rejects.toBeInstanceOf(StaleRunLeaseError);
    sub.unsubscribe();
    expect(Date.now() - started).toBeLessThan(15_000); // the sleep was stopped, not waited out
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ level: 'warn', context: { runId } });
    expect(reports[0]!.message).toMatch(/heartbeat failed/);
    expect((await h.runs.get(runId)).owner).toBe('other-host');
  });

  it('a heartbeat racing the end of its run (refused: the run is completed) is not reported: no lease was lost', async () => {
    const reports: string[] = [];
    const logger: TurnEngineLogger = {
      warn: (message, context) => reports.push(`warn ${message} ${JSON.stringify(context)}`),
      error: (message, context) => reports.push(`error ${message} ${JSON.stringify(context)}`),
    };
    h = await openHarness({
      script: [{ tool_calls: [{ name: 'shell', arguments: { command: 'sleep 1.5' } }] }, { content: 'done' }],
      runLeaseMs: 3_000, // a heartbeat every second: one starts while the shell runs
      logger,
    });
    const harness = h;
    const heartbeat = harness.runs.heartbeat.bind(harness.runs);
    const refusals: Promise<unknown>[] = [];
    // A slow heartbeat: it reaches the store only once the turn has completed the run.
    harness.runs.heartbeat = async (lease) => {
      await new Promise<void>((resolve) => {
        const sub = harness.store.events$.subscribe((e) => {
          if (e.streamId !== lease.runId || e.type !== 'run.completed') return;
          resolve();
          queueMicrotask(() => sub.unsubscribe());
        });
      });
      const attempt = heartbeat(lease);
      refusals.push(attempt.catch((err: unknown) => err));
      return attempt;
    };
    const { sessionId } = await harness.sessions.create({ title: 't', coreId: 'default' });
    const outcome = await harness.engine.runTurn({ sessionId, text: 'go' });
    expect(outcome.status).toBe('completed');
    await until(() => refusals.length > 0);
    const [refusal] = await Promise.all(refusals);
    expect(refusal).toBeInstanceOf(IllegalTransitionError);
    expect((refusal as Error).message).toMatch(/is completed; run.owner_heartbeat is not allowed/);
    await new Promise((resolve) => setImmediate(resolve));
    expect(reports).toEqual([]);
  });

  it('a heartbeat that loses its races on the run stream while the lease holds is tried again, not a lost lease', async () => {
    const reports: string[] = [];
    const logger: TurnEngineLogger = {
      warn: (message) => reports.push(`warn ${message}`),
      error: (message) => reports.push(`error ${message}`),
    };
    h = await openHarness({
      script: [{ tool_calls: [{ name: 'shell', arguments: { command: 'sleep 2.5' } }] }, { content: 'done' }],
      runLeaseMs: 3_000, // a heartbeat every second: two or three beats while the shell runs
      logger,
    });
    const harness = h;
    const heartbeat = harness.runs.heartbeat.bind(harness.runs);
    let beats = 0;
    // The first beat exhausts its retries against other writers of the run's stream.
    harness.runs.heartbeat = async (lease) => {
      beats++;
      if (beats === 1) throw new StreamVersionConflictError(lease.runId, 3, 4);
      return heartbeat(lease);
    };
    const { sessionId } = await harness.sessions.create({ title: 't', coreId: 'default' });
    const outcome = await harness.engine.runTurn({ sessionId, text: 'go' });
    expect(outcome.status).toBe('completed');
    expect(beats).toBeGreaterThanOrEqual(2);
    expect(reports).toEqual([]);
  });
});

async function until(condition: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 10_000; !condition(); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() > deadline) throw new Error('timed out');
  }
}
