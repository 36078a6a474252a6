import { closeSync, openSync, readSync } from 'node:fs';
import { createSeededIdGenerator } from '@demiurge/contracts/testing';
import type { EventStore, ProjectionReader } from '@demiurge/event-store';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { controlPlaneProjectors, DurableWorkRuntime, StaleClaimError, type WorkClaim } from '../src/index.js';
import { openRuntime, type Runtime } from './harness.js';

const KIND = 'task.completion';

/** The store, with every projection reader it hands out passed through `wrap` (to count or alter reads). */
function withReaders<S extends EventStore>(store: S, wrap: (reader: ProjectionReader) => ProjectionReader): S {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop !== 'projection') return Reflect.get(target, prop, receiver);
      return (name: string) => wrap(target.projection(name));
    },
  });
}

/**
 * The commits in the store's WAL file since its last reset: frames whose header marks a commit (a non-zero
 * database size) and whose salts match the WAL header's (older frames are left-overs of earlier generations).
 */
function walCommits(dbPath: string): number {
  const fd = openSync(`${dbPath}-wal`, 'r');
  try {
    const header = Buffer.alloc(32);
    if (readSync(fd, header, 0, 32, 0) < 32) return 0;
    const pageSize = header.readUInt32BE(8);
    const [salt1, salt2] = [header.readUInt32BE(16), header.readUInt32BE(20)];
    const frame = Buffer.alloc(24);
    let commits = 0;
    for (let offset = 32; readSync(fd, frame, 0, 24, offset) === 24; offset += 24 + pageSize) {
      if (frame.readUInt32BE(8) !== salt1 || frame.readUInt32BE(12) !== salt2) break;
      if (frame.readUInt32BE(4) !== 0) commits++;
    }
    return commits;
  } finally {
    closeSync(fd);
  }
}

async function enqueue(rt: Runtime, n: number): Promise<string[]> {
  const made = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      rt.work.enqueue({ kind: KIND, subjectId: `s${i}`, payload: { taskId: rt.ids.next('tsk') } }),
    ),
  );
  return made.map((m) => m.workId);
}

describe('batched claims on a real SQLite file', () => {
  let rt: Runtime;
  beforeEach(async () => {
    rt = await openRuntime({ leaseMs: 60_000 });
  });
  afterEach(async () => {
    await rt.dispose();
  });

  it('claimDue({ limit: N }) claims N items in one commit, each with its own token', async () => {
    const all = await enqueue(rt, 12);
    const before = walCommits(rt.path);
    const claims = await rt.work.claimDue({ kind: KIND, limit: 8 });
    expect(walCommits(rt.path) - before).toBe(1);
    expect(claims.map((c) => c.workId)).toEqual(all.slice(0, 8));
    expect(new Set(claims.map((c) => c.claimToken)).size).toBe(8);
    for (const claim of claims) expect(claim.attempt).toBe(1);
  });

  it('concurrent claimers of one process share one commit instead of queueing behind each other', async () => {
    await enqueue(rt, 20);
    const before = walCommits(rt.path);
    const claims = (
      await Promise.all(Array.from({ length: 8 }, () => rt.work.claimDue({ kind: KIND, limit: 1 })))
    ).flat();
    expect(claims).toHaveLength(8);
    expect(new Set(claims.map((c) => c.workId)).size).toBe(8);
    expect(walCommits(rt.path) - before).toBe(1);
  });

  it('concurrent claimers read the candidates once, not once each', async () => {
    await enqueue(rt, 20);
    let lists = 0;
    // The same store, counting the candidate lists its work-items reader serves.
    const counted = withReaders(rt.store, (reader) => ({
      ...reader,
      list: (...args: Parameters<typeof reader.list>) => {
        lists++;
        return reader.list(...args);
      },
    }));
    const work = new DurableWorkRuntime({ store: counted, clock: rt.clock, ids: rt.ids, owner: 'test-host' });
    const claims = (await Promise.all(Array.from({ length: 8 }, () => work.claimDue({ kind: KIND, limit: 1 })))).flat();
    expect(new Set(claims.map((c) => c.workId)).size).toBe(8);
    // One list of the claimable items for all eight (before: sixteen); it filled its limit with due items, so
    // the leases (which come after every due item) were not read.
    expect(lists).toBe(1);
  });

  it('many claimers on two connections claim every item exactly once', async () => {
    const all = await enqueue(rt, 150);
    const other = await openSqliteEventStore({
      path: rt.path,
      projectors: controlPlaneProjectors,
      clock: rt.clock,
      ids: createSeededIdGenerator(rt.clock, 99),
    });
    try {
      const otherWork = new DurableWorkRuntime({
        store: other,
        clock: rt.clock,
        ids: createSeededIdGenerator(rt.clock, 98),
        owner: 'other-host',
      });
      const runtimes = [rt.work, otherWork];
      const claimed: WorkClaim[] = [];
      await Promise.all(
        Array.from({ length: 12 }, async (_, w) => {
          const work = runtimes[w % 2]!;
          for (let empty = 0; empty < 3; ) {
            const got = await work.claimDue({ kind: KIND, limit: 1 + (w % 4) });
            if (got.length === 0) empty++;
            claimed.push(...got);
            for (const claim of got) await work.succeed(claim);
          }
        }),
      );
      expect(claimed.map((c) => c.workId).sort()).toEqual([...all].sort());
      expect(new Set(claimed.map((c) => c.claimToken)).size).toBe(150);
      const events = await rt.store.readAll({ types: ['work.claimed', 'work.succeeded'] });
      expect(events.filter((e) => e.type === 'work.claimed')).toHaveLength(150);
      expect(events.filter((e) => e.type === 'work.succeeded')).toHaveLength(150);
      expect(new Set(claimed.map((c) => c.owner))).toEqual(new Set(['test-host', 'other-host']));
    } finally {
      await other.close();
    }
  });

  it('fencing holds: a batch-claimed item reclaimed after its lease expired refuses the old token', async () => {
    await enqueue(rt, 3);
    const first = await rt.work.claimDue({ kind: KIND, limit: 3 });
    expect(first).toHaveLength(3);
    rt.clock.advance(60_001);
    const second = await rt.work.claimDue({ kind: KIND, limit: 3 });
    expect(second.map((c) => c.workId)).toEqual(first.map((c) => c.workId));
    for (const claim of second) expect(claim.attempt).toBe(2);
    await expect(rt.work.succeed(first[0]!)).rejects.toBeInstanceOf(StaleClaimError);
    await rt.work.succeed(second[0]!);
    expect((await rt.work.get(first[0]!.workId)).status).toBe('succeeded');
    const expired = await rt.store.readAll({ types: ['work.lease_expired'] });
    expect(expired).toHaveLength(3);
  });

  it('a claim goes on from the item as its claim left it, until another writer moves the item: then it is refused', async () => {
    await enqueue(rt, 2);
    const [mine, next] = await rt.work.claimDue({ kind: KIND, limit: 2 });
    // Another host cancels the first item while this one holds its live claim (lease of 60 s).
    const other = new DurableWorkRuntime({ store: rt.store, clock: rt.clock, ids: rt.ids, owner: 'operator-host' });
    await other.cancel(mine!.workId, 'operator says no');
    // What this runtime remembers of the claim allows the success; the stream does not: refused, nothing written.
    await expect(rt.work.succeed(mine!)).rejects.toBeInstanceOf(StaleClaimError);
    expect((await rt.work.get(mine!.workId)).status).toBe('cancelled');
    // The untouched claim runs its commands without reading its stream first, and they are recorded in order.
    await rt.work.markRunning(next!);
    const renewed = await rt.work.heartbeat(next!);
    await rt.work.succeed(renewed);
    const events = await rt.store.readStream(next!.workId);
    expect(events.map((e) => e.type)).toEqual([
      'work.enqueued',
      'work.claimed',
      'work.running',
      'work.heartbeat',
      'work.succeeded',
    ]);
    expect(await rt.store.readAll({ types: ['work.succeeded'] })).toHaveLength(1);
  });
  it('a claim decided from a read model behind the stream is a conflict, then decided from the stream', async () => {
    const [workId] = await enqueue(rt, 1);
    // The item as the read model holds it now (queued, version 1), served after the item moved on.
    const stale = await rt.work.get(workId!);
    const first = await rt.work.claim(workId!);
    await rt.work.fail(first, {
      error: { code: 'x', message: 'try again' },
      retryAt: new Date(rt.clock.now()).toISOString(),
    });
    let staleReads = 0;
    const behind = withReaders(rt.store, (reader) => ({
      ...reader,
      get: async <T>(collection: string, id: string) => {
        if (collection !== 'items' || id !== workId) return reader.get<T>(collection, id);
        staleReads++;
        return stale as T;
      },
    }));
    const work = new DurableWorkRuntime({ store: behind, clock: rt.clock, ids: rt.ids, owner: 'test-host' });
    const [claim] = await work.claimDue({ kind: KIND, limit: 1 });
    // The stale view (attempt 0 at version 1) lost to the stream (version 3): the second round read the stream.
    expect(staleReads).toBe(1);
    expect(claim).toMatchObject({ workId, attempt: 2 });
    await work.succeed(claim!);
    const events = await rt.store.readStream(workId!);
    expect(events.map((e) => e.type)).toEqual([
      'work.enqueued',
      'work.claimed',
      'work.failed',
      'work.claimed',
      'work.succeeded',
    ]);
    expect(work.claimStats).toEqual({ claimed: 1, racesLost: 1 });
  });
  it('expired leases are claimed after the due items, once the due list no longer fills the listing', async () => {
    const all = await enqueue(rt, 6);
    const early = await rt.work.claimDue({ kind: KIND, limit: 2 });
    rt.clock.advance(60_001);
    const order: WorkClaim[] = [];
    for (let claims = await rt.work.claimDue({ kind: KIND, limit: 1 }); claims.length > 0; ) {
      order.push(...claims);
      claims = await rt.work.claimDue({ kind: KIND, limit: 1 });
    }
    expect(order.map((c) => c.workId)).toEqual([...all.slice(2), ...early.map((c) => c.workId)]);
    expect(order.map((c) => c.attempt)).toEqual([1, 1, 1, 1, 2, 2]);
  });
});
