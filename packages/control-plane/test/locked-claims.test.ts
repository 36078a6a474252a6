import { createIdGenerator, systemClock } from '@demiurge/contracts';
import { openPostgresEventStore, type PostgresEventStore } from '@demiurge/event-store-postgres';
import { testPostgresOrSkip } from '@demiurge/event-store-postgres/testing';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { controlPlaneProjectors, DurableWorkRuntime } from '../src/index.js';

// claimDue on PostgreSQL: decided under the log-head lock, and an idle host's polls never take that lock.
const server = await testPostgresOrSkip();
afterAll(() => server.server?.stop());
const describePg = server.server ? describe : describe.skip;
const opened: PostgresEventStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

/** The statements the process sends while `work` runs. */
async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
    seen.push((typeof config === 'string' ? config : (config as { text: string }).text).trim().slice(0, 40));
    return (original as (...args: unknown[]) => unknown).call(this, config, ...rest);
  } as typeof original;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = original;
  }
  return seen;
}

describePg('claims on PostgreSQL', () => {
  it('a claim is one transaction with nothing read before its lock; an idle poll after an empty one only reads', async () => {
    const store = await openPostgresEventStore({
      url: await server.server!.createDatabase(),
      projectors: controlPlaneProjectors,
    });
    opened.push(store);
    const ids = createIdGenerator(systemClock);
    const work = new DurableWorkRuntime({ store, clock: systemClock, ids, owner: 'host-1' });
    const { workId } = await work.enqueue({
      kind: 'task.completion',
      subjectId: 's1',
      payload: { taskId: ids.next('tsk') },
    });
    let claims: Awaited<ReturnType<DurableWorkRuntime['claimDue']>> = [];
    const claiming = await statementsOf(async () => {
      claims = await work.claimDue({ kind: 'task.completion', limit: 4 });
    });
    expect(claims.map((c) => [c.workId, c.attempt])).toEqual([[workId, 1]]);
    // One transaction: BEGIN + the locking statement with the listings first (nothing read before the lock; the
    // listing path read the due and lease lists and the item's stream before it), the write + COMMIT last.
    const heads = claiming.map((s) => s.slice(0, 6).toUpperCase());
    expect(heads.slice(0, 2)).toEqual(['BEGIN', 'SELECT']);
    expect(heads.slice(-2)).toEqual(['WITH I', 'COMMIT']);
    expect(heads.filter((s) => s === 'BEGIN')).toHaveLength(1);
    // Nothing left: this call takes the lock once and finds nothing.
    expect(await work.claimDue({ kind: 'task.completion', limit: 4 })).toEqual([]);
    // The next polls of the idle queue read, without a transaction (no log-head lock).
    const idle = await statementsOf(() => work.claimDue({ kind: 'task.completion', limit: 4 }));
    expect(idle.length).toBeGreaterThan(0);
    expect(idle.filter((s) => s.toUpperCase().startsWith('BEGIN'))).toEqual([]);
    // Work arrives: the next poll sees it due and claims it under the lock.
    await work.enqueue({ kind: 'task.completion', subjectId: 's2', payload: { taskId: ids.next('tsk') } });
    const [next] = await work.claimDue({ kind: 'task.completion', limit: 4 });
    expect(next?.attempt).toBe(1);
    await work.succeed(claims[0]!);
    await work.succeed(next!);
    expect(work.claimStats).toEqual({ claimed: 2, racesLost: 0 });
  });
});
