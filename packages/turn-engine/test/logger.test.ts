import { createSeededIdGenerator } from '@demiurge/contracts/testing';
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
});
