import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFakeClock, createSeededIdGenerator } from '@demiurge/contracts/testing';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { describe, expect, it } from 'vitest';
import { applyRunEvent, initialRun, loadRun, RunRuntime } from '../src/index.js';

describe('ownedAppend returns the run it wrote', () => {
  it('equals the run loaded from the log after each write, from an admission folded in memory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'demiurge-owned-'));
    const clock = createFakeClock(Date.parse('2026-06-01T10:00:00.000Z'));
    const ids = createSeededIdGenerator(clock, 3);
    const store = await openSqliteEventStore({ path: join(dir, 's.sqlite3'), clock, ids });
    try {
      const runs = new RunRuntime({ store, clock, ids, owner: 'host-a' });
      const { runId, lease, stream } = runs.startStream(ids.next('ses'), { kind: 'user', id: 'alice' });
      await store.append(stream);
      const admitted = stream.events.reduce(applyRunEvent, initialRun(runId));
      const { events: _loadedEvents, ...loaded } = await loadRun(store, runId);
      expect({ ...admitted, events: undefined }).toEqual({ ...loaded, events: undefined });

      const checkpointed = await runs.ownedAppend(lease, () => ({
        run: [{ type: 'run.checkpointed', data: { runId, checkpointId: 'c1', stage: 'model_round' } }],
      }));
      expect(checkpointed).toMatchObject({ state: 'running', stage: 'model_round', version: 4 });
      await runs.requestCancel(runId, 'stop');
      const settled = await runs.ownedAppend(lease, (run) => ({
        run: run.state === 'cancelling' ? [] : [{ type: 'run.paused', data: { runId, reason: 'x' } }],
      }));
      const fresh = await loadRun(store, runId);
      expect({ ...settled, events: [] }).toEqual({ ...fresh, events: [] });
      expect(settled).toMatchObject({ state: 'cancelling', reason: 'stop', version: 5 });
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
