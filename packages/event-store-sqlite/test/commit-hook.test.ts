import { testEventRegistry } from '@demiurge/event-store/testing';
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { type CommitPhase, openSqliteEventStore } from '../src/index.js';
import { storeFileEachTest } from './temp-dir.js';

let path: string;
storeFileEachTest((file) => {
  path = file;
});

const increment = (by: number, idempotencyKey?: string) => ({
  input: {
    streamType: 'counter',
    streamId: 'c',
    expectedVersion: 'any' as const,
    events: [{ type: 'test.incremented', data: { by } }],
  },
  options: idempotencyKey ? { idempotencyKey } : undefined,
});

it('onCommit is told before (uncommitted, seen by no other connection) and after each commit that appends', async () => {
  const seen: { phase: CommitPhase; positions: number[]; otherHead: number }[] = [];
  const store = await openSqliteEventStore({
    path,
    registry: testEventRegistry,
    onCommit: (phase, events) => {
      // Another connection reads only what is committed: before the commit, not yet these events.
      const reader = new Database(path, { readonly: true });
      const otherHead = reader.prepare<[], { head: number | null }>('SELECT max(position) AS head FROM events').get()!;
      reader.close();
      seen.push({ phase, positions: events.map((e) => e.position), otherHead: otherHead.head ?? 0 });
    },
  });
  try {
    const one = increment(1, 'k1');
    await store.append(one.input, one.options);
    // The same idempotency key again: replayed, nothing appended, no commit told.
    await store.append(one.input, one.options);
    await Promise.all([store.append(increment(2).input), store.append(increment(3).input)]);
    expect(seen.map((s) => `${s.phase} ${s.positions.join(',')}`)).toEqual([
      'before 1',
      'after 1',
      'before 2,3',
      'after 2,3',
    ]);
    expect(seen.map((s) => s.otherHead)).toEqual([0, 1, 1, 3]);
  } finally {
    await store.close();
  }
});
