import { type Clock, createIdGenerator, type RecordedEvent } from '@demiurge/contracts';
import { type EventStore, pollLoop } from '@demiurge/event-store';
import { openPostgresEventStore, type PostgresEventStore } from '@demiurge/event-store-postgres';
import { testPostgresOrSkip } from '@demiurge/event-store-postgres/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { controlPlaneProjectors, DurableWorkRuntime, RuntimeControlPlane } from '../src/index.js';

// Several hosts on one PostgreSQL database, each its own store (its own pool and LISTEN connection), in this
// process: the database does not know they share a process. One server for the file.
const pg = await testPostgresOrSkip();
afterAll(() => pg.server?.stop());
const describePg = pg.server ? describe : describe.skip;

const opened: PostgresEventStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

const MINUTE = 60_000;
const skewed = (ms: number): Clock => ({ now: () => Date.now() + ms });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Host {
  readonly store: PostgresEventStore;
  readonly work: DurableWorkRuntime;
  readonly tasks: RuntimeControlPlane;
  readonly clock: Clock;
}

async function openHost(url: string, owner: string, clock?: Clock, leaseMs = 60_000): Promise<Host> {
  const store = await openPostgresEventStore({ url, projectors: controlPlaneProjectors });
  opened.push(store);
  const at = clock ?? (await store.databaseClock());
  const ids = createIdGenerator(at);
  const work = new DurableWorkRuntime({ store, clock: at, ids, owner, leaseMs });
  return { store, work, tasks: new RuntimeControlPlane({ store, clock: at, ids, work }), clock: at };
}

describePg('several hosts on one PostgreSQL database', () => {
  it('a worker loop on one host wakes on work another host enqueued (LISTEN/NOTIFY), long before its poll interval', async () => {
    const url = await pg.server!.createDatabase();
    const producer = await openHost(url, 'producer');
    const consumer = await openHost(url, 'consumer');
    const rounds: string[] = [];
    const errors: unknown[] = [];
    // The host's loops: a round on any of `wakeOn` in the store's events$, else every intervalMs. Here the
    // interval and the first round are a minute away, so only a wake-up can run a round within the test.
    const loop = pollLoop({
      intervalMs: 60_000,
      firstDelayMs: 60_000,
      events$: consumer.store.events$,
      wakeOn: ['work.enqueued', 'task.submitted'],
      onError: (err) => errors.push(err),
      round: async () => {
        for (const claim of await consumer.work.claimDue({ kind: 'task.completion', limit: 8 })) {
          await consumer.work.succeed(claim);
          rounds.push(`claimed ${claim.workId}`);
        }
        const board = await consumer.tasks.listTasks('ses_00000000000000000000000001');
        for (const task of board.filter((t) => t.status === 'created')) {
          await consumer.tasks.startTask(task, 'consumer');
          rounds.push(`started ${task.taskId}`);
        }
      },
    });
    try {
      const started = Date.now();
      const { workId } = await producer.work.enqueue({
        kind: 'task.completion',
        subjectId: 'wake-1',
        payload: { taskId: `tsk_${'1'.repeat(26)}` },
      });
      const task = await producer.tasks.submitTask({
        sessionId: 'ses_00000000000000000000000001',
        kind: 'terminal.exec',
        title: 'ls',
        input: { command: 'ls' },
      });
      const seen = (type: string, streamId: string) =>
        waitForEvent(producer.store, `${type} of ${streamId}`, (e) => e.type === type && e.streamId === streamId);
      const claimed = await seen('work.claimed', workId);
      await seen('task.started', task.taskId);
      expect((claimed.data as { owner: string }).owner).toBe('consumer');
      // Well before the minute a poll would have taken (generous: the machine is loaded).
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(errors).toEqual([]);
      await loop.close();
      // The consumer's own rounds did both (close waits for the round in flight).
      expect(rounds).toEqual(expect.arrayContaining([`claimed ${workId}`, `started ${task.taskId}`]));
    } finally {
      await loop.close();
    }
  });

  it('two hosts whose clocks are minutes apart judge a lease by the database clock, the same way', async () => {
    const url = await pg.server!.createDatabase();
    const behind = await openHost(url, 'behind', undefined, 1_500);
    const ahead = await openHost(url, 'ahead', undefined, 1_500);
    // Their own clocks: 3 minutes slow and 5 minutes fast. The runtimes get database clocks over them.
    const clockA = await behind.store.databaseClock({ local: skewed(-3 * MINUTE) });
    const clockB = await ahead.store.databaseClock({ local: skewed(5 * MINUTE) });
    const idsA = createIdGenerator(clockA);
    const workA = new DurableWorkRuntime({
      store: behind.store,
      clock: clockA,
      ids: idsA,
      owner: 'behind',
      leaseMs: 1_500,
    });
    const workB = new DurableWorkRuntime({
      store: ahead.store,
      clock: clockB,
      ids: createIdGenerator(clockB),
      owner: 'ahead',
      leaseMs: 1_500,
    });
    const item = await workA.enqueue({
      kind: 'task.completion',
      subjectId: 'lease',
      payload: { taskId: `tsk_${'2'.repeat(26)}` },
    });
    const claim = await workA.claim(item.workId);
    // The fast host sees a live lease: nothing to claim, nothing to recover.
    expect(await workB.claimDue({ kind: 'task.completion', limit: 5 })).toEqual([]);
    expect(await workB.recover()).toEqual({ rescheduled: 0, unknown: 0, corrupt: 0 });
    // Both clocks read the same time, whatever their hosts' clocks say.
    const slack = clockA.errorBoundMs + clockB.errorBoundMs + 50;
    expect(Math.abs(clockA.now() - clockB.now())).toBeLessThanOrEqual(slack);
    // Once the database clock passes the lease (as both see it), the fast host takes the item over.
    const until = Date.parse(claim.leaseUntil);
    while (clockB.now() <= until + slack) await sleep(100);
    expect(clockA.now()).toBeGreaterThan(until);
    const [taken] = await workB.claimDue({ kind: 'task.completion', limit: 5 });
    expect(taken).toMatchObject({ workId: item.workId, attempt: 2, owner: 'ahead' });
    expect((await ahead.store.readStream(item.workId)).map((e) => e.type)).toEqual([
      'work.enqueued',
      'work.claimed',
      'work.lease_expired',
      'work.claimed',
    ]);

    // The hazard the database clock removes: with its own fast clock, the same host steals a live lease.
    const second = await workA.enqueue({
      kind: 'task.completion',
      subjectId: 'lease-2',
      payload: { taskId: `tsk_${'3'.repeat(26)}` },
    });
    await workA.claim(second.workId, { leaseMs: 60_000 });
    const ownClock = skewed(5 * MINUTE);
    const naive = new DurableWorkRuntime({
      store: ahead.store,
      clock: ownClock,
      ids: createIdGenerator(ownClock),
      owner: 'naive',
    });
    expect((await naive.claimDue({ kind: 'task.completion', limit: 5 })).map((c) => c.workId)).toContain(second.workId);
  });
});

/** The first event of the store's log (history or live, through the store's own subscription) that matches. */
function waitForEvent(store: EventStore, what: string, match: (e: RecordedEvent) => boolean): Promise<RecordedEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.unsubscribe();
      reject(new Error(`no ${what} within 45 s`));
    }, 45_000);
    const sub = store.subscribe({ from: 1 }).subscribe({
      next: (e) => {
        if (!match(e)) return;
        clearTimeout(timer);
        queueMicrotask(() => sub.unsubscribe());
        resolve(e);
      },
      error: reject,
    });
  });
}
