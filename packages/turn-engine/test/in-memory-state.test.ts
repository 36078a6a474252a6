import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFakeClock, createSeededIdGenerator } from '@demiurge/contracts/testing';
import type { EventStore } from '@demiurge/event-store';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { verifyLog } from '@demiurge/lifecycle';
import { createFakeProvider } from '@demiurge/providers';
import { afterEach, describe, expect, it } from 'vitest';
import { createTurnRuntime, turnProjectors } from '../src/index.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** The store, with every `readStream` counted by the stream's id prefix (`run`, `trn`, `tcl`...). */
function countingReads(store: EventStore): { store: EventStore; reads: Map<string, number> } {
  const reads = new Map<string, number>();
  const counted = new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'readStream') {
        return (streamId: string, options?: unknown) => {
          const prefix = streamId.split('_')[0]!;
          reads.set(prefix, (reads.get(prefix) ?? 0) + 1);
          return target.readStream(streamId, options as never);
        };
      }
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store: counted, reads };
}

describe('the loop keeps the turn in memory', () => {
  it('a turn of several rounds and calls never re-reads its turn or its tool-call streams', async () => {
    dir = mkdtempSync(join(tmpdir(), 'demiurge-turn-mem-'));
    const workspace = join(dir, 'workspace');
    mkdirSync(workspace);
    const clock = createFakeClock(Date.parse('2026-06-01T10:00:00.000Z'));
    const ids = createSeededIdGenerator(clock, 7);
    const raw = await openSqliteEventStore({ path: join(dir, 's.sqlite3'), projectors: turnProjectors, clock, ids });
    const { store, reads } = countingReads(raw);
    const round = (n: number) => ({
      tool_calls: [
        { name: 'write_file', arguments: { path: `f${n}.txt`, content: `${n}` } },
        { name: 'read_file', arguments: { path: `f${n}.txt` } },
      ],
    });
    const { sessions, engine } = createTurnRuntime({
      store,
      clock,
      ids,
      owner: 'host',
      workspaceRoot: realpathSync(workspace),
      provider: createFakeProvider({ script: [round(1), round(2), round(3), { content: 'done' }] }),
    });
    try {
      const { sessionId } = await sessions.create({ title: 't', coreId: 'default' });
      reads.clear();
      const outcome = await engine.runTurn({ sessionId, text: 'go' });
      expect(outcome).toMatchObject({ status: 'completed', text: 'done', steps: 4 });
      // The turn and its 6 tool calls are known from what the loop appended: not one read of their streams.
      expect(reads.get('trn') ?? 0).toBe(0);
      expect(reads.get('tcl') ?? 0).toBe(0);
      expect((await verifyLog(raw.iterate())).violations).toEqual([]);
    } finally {
      await raw.close();
    }
  });
});
