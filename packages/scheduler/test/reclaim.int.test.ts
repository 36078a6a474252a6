import { DurableWorkRuntime, StaleClaimError } from '@demiurge/control-plane';
import { afterEach, describe, expect, it } from 'vitest';
import type { FireHandler, StartSessionSpec } from '../src/index.js';
import { eventTypes, expectCleanLog, openEnv, type SchedulerEnv } from './harness.js';

let env: SchedulerEnv;
afterEach(() => env?.dispose());

const DAILY = 'cron: "0 9 * * *"\nprompt: Write the morning digest.\n';
const DUE = '2026-05-01T09:00:00.000Z';

/** A due fire and a second host (its own work runtime and owner) on the same database. */
async function setup(options: { fire?: FireHandler } = {}) {
  env = await openEnv({ start: '2026-05-01T08:00:00Z', leaseMs: 10_000, ...options });
  env.write('digest', DAILY);
  await env.scheduler.tick();
  env.clock.set(Date.parse('2026-05-01T09:00:05Z'));
  await env.scheduler.tick();
  const workB = new DurableWorkRuntime({
    store: env.store,
    clock: env.clock,
    ids: env.ids,
    owner: 'host-b',
    leaseMs: 10_000,
  });
  return env.runtime({ owner: 'host-b', work: workB });
}

function gate() {
  let open!: () => void;
  let entered!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const reached = new Promise<void>((resolve) => {
    entered = resolve;
  });
  return { open, opened, entered, reached };
}

describe('reclaiming an expired claim', () => {
  it('gets a new token, attempt + 1 and the same due time; the old token is refused and changes nothing', async () => {
    const hostB = await setup();
    const [stale] = await env.work.claimDue({ kind: 'schedule.fire', limit: 1 }); // host A claims, then stalls
    env.clock.advance(11_000);
    const [fired] = await hostB.runDue({ limit: 5 });
    expect(fired).toMatchObject({ workId: stale!.workId, attempt: 2, dueAt: DUE, outcome: 'completed' });
    const claims = (await env.store.readAll({ types: ['work.claimed'] })).map((e) => e.data);
    expect(claims).toEqual([
      expect.objectContaining({ claimToken: stale!.claimToken, attempt: 1, owner: 'host-a' }),
      expect.objectContaining({ attempt: 2, owner: 'host-b' }),
    ]);
    expect((claims[1] as { claimToken: string }).claimToken).not.toBe(stale!.claimToken);

    const head = await env.store.head();
    const refused = await env.scheduler.runClaim(stale!).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StaleClaimError);
    expect(refused).toMatchObject({ code: 'stale_claim', workId: stale!.workId, presented: stale!.claimToken });
    expect(await env.store.head()).toBe(head);
    expect((await env.scheduler.history('digest'))[0]).toMatchObject({ status: 'completed', taskId: fired!.taskId });
    await expectCleanLog(env.store);
  });

  it('a claimant stalled mid-fire is fenced off; the new claimant finishes the same fire with the same task id', async () => {
    const g = gate();
    const hostB = await setup();
    const hostA = env.runtime({
      startSession: async (spec: StartSessionSpec) => {
        g.entered();
        await g.opened;
        return env.startSession(spec);
      },
    });
    const runA = hostA.runDue({ limit: 1 });
    await g.reached; // A has claimed the work and the instance (task id chosen), then stalls
    env.clock.advance(11_000);
    const [b] = await hostB.runDue({ limit: 1 });
    g.open();
    const [a] = await runA;
    expect(b).toMatchObject({ attempt: 2, dueAt: DUE, outcome: 'completed' });
    expect(a).toMatchObject({ attempt: 1, outcome: 'error', error: { code: 'stale_claim' } });
    expect(a!.cause).toBeInstanceOf(StaleClaimError);
    expect(await eventTypes(env.store, 'task.')).toEqual(['task.submitted']);
    expect(await eventTypes(env.store, 'schedule_instance.c')).toEqual([
      'schedule_instance.claimed',
      'schedule_instance.completed',
    ]);
    const task = (await env.store.readAll({ types: ['task.submitted'] }))[0]!.data as {
      taskId: string;
      sessionId: string;
    };
    expect(task).toMatchObject({ taskId: b!.taskId, sessionId: b!.sessionId });
    await expectCleanLog(env.store);
  });

  it('a turn a crashed claimant started is not run twice: the new claimant fails it as interrupted', async () => {
    const g = gate();
    let turns = 0;
    const hostB = await setup({
      fire: async () => {
        turns++;
        if (turns === 1) {
          g.entered();
          await g.opened;
        }
        return { summary: 'done' };
      },
    });
    const runA = env.scheduler.runDue({ limit: 1 });
    await g.reached;
    env.clock.advance(11_000);
    const [b] = await hostB.runDue({ limit: 1 });
    g.open();
    const [a] = await runA;
    expect(turns).toBe(1);
    expect(b).toMatchObject({ attempt: 2, outcome: 'failed', error: { code: 'interrupted' } });
    expect(a).toMatchObject({ outcome: 'error', error: { code: 'stale_claim' } });
    expect(await env.store.projection('task-board').get('tasks', b!.taskId!)).toMatchObject({
      status: 'failed',
      error: { code: 'interrupted' },
    });
    await expectCleanLog(env.store);
  });
});
