import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DurableWorkRuntime, HostWorkLifecycleRuntime } from '@demiurge/control-plane';
import type { EventStore } from '@demiurge/event-store';
import { afterEach, describe, expect, it } from 'vitest';
import { eventTypes, expectCleanLog, openEnv, type SchedulerEnv } from './harness.js';

let env: SchedulerEnv;
afterEach(() => env?.dispose());

const DAILY = 'cron: "0 9 * * *"\ntimezone: UTC\nprompt: Write the morning digest.\n';

/** The store, with its appends held at a gate until `open()`: `reached` resolves when the first one waits there. */
function gatedStore(store: EventStore): { store: EventStore; reached: Promise<void>; open: () => void } {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => {
    reach = resolve;
  });
  const gated = new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (prop === 'append') {
        return async (...args: Parameters<EventStore['append']>) => {
          reach();
          await gate;
          return target.append(...args);
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store: gated, reached, open };
}

// The interleaving of the multi-host PostgreSQL test's one failure (CI, 2026-12-02): the test disabled the
// schedule while its last due time was still undecided (the hosts were seconds late). Host B, which read the
// file after, retired the instance (`schedule_disabled`); host A, which had read it before and listed the
// instance as undecided, enqueued its fire. Neither commit conflicts with the other (the enqueue writes the work
// item's stream, the retirement the instance's), so both land, in either order (in CI the retirement committed
// first, 25 ms before the enqueue). docs/schedules.md, "Exactly once", says what happens then: the disable wins,
// the fire's claimant finds no live instance and fails the item `not_fired`; nothing fires, nothing twice.
describe('a schedule disabled while another host enqueues its due time', () => {
  it.each([
    ['the retirement commits first (as in CI)', 'A'],
    ['the enqueue commits first', 'B'],
  ] as const)(
    '%s: the disable wins, the item fails not_fired once, nothing fires, the log is clean',
    async (_, held) => {
      env = await openEnv({ start: '2026-05-02T08:00:00Z' });
      env.write('digest', DAILY);
      await env.cycle(); // the 09:00 instance is recorded
      // Host B reads a copy of the core in which the schedule is disabled already.
      const disabledCore = join(env.dir, 'core-b');
      mkdirSync(join(disabledCore, 'schedules'), { recursive: true });
      writeFileSync(join(disabledCore, 'schedules', 'digest.yaml'), `${DAILY}enabled: false\n`);
      // The held host's first append (A's enqueue, or B's retirement) waits at a gate once decided.
      const gated = gatedStore(env.store);
      const store = gated.store;
      const hostA =
        held === 'A'
          ? (() => {
              const work = new DurableWorkRuntime({ store, clock: env.clock, ids: env.ids, owner: 'host-a' });
              const host = new HostWorkLifecycleRuntime({ store, clock: env.clock, ids: env.ids, work });
              return env.runtime({ store, work, host });
            })()
          : env.scheduler;
      const hostB = env.runtime({ owner: 'host-b', schedules: disabledCore, ...(held === 'B' ? { store } : {}) });
      env.clock.set(Date.parse('2026-05-02T09:00:05Z'));

      const [first, second] = held === 'A' ? [hostA, hostB] : [hostB, hostA];
      const heldTick = first.tick();
      await gated.reached;
      const otherTick = await second.tick();
      gated.open();
      const [a, b] = held === 'A' ? [await heldTick, otherTick] : [otherTick, await heldTick];
      expect(a.entries.map((e) => [e.action, e.dueAt])).toEqual([
        ['enqueued', '2026-05-02T09:00:00.000Z'],
        ['scheduled', '2026-05-03T09:00:00.000Z'],
      ]);
      expect(b.entries.map((e) => [e.action, e.dueAt])).toEqual([
        ['disabled', '2026-05-02T09:00:00.000Z'],
        // B read the summary before A recorded the next due time: it retires that one only if it saw it.
        ...(held === 'B' ? [['disabled', '2026-05-03T09:00:00.000Z']] : []),
      ]);
      const order = (await env.store.readAll())
        .filter((e) => e.type === 'work.enqueued' || e.type === 'schedule_instance.failed')
        .map((e) => e.type);
      expect(order.slice(0, 2)).toEqual(
        held === 'A' ? ['schedule_instance.failed', 'work.enqueued'] : ['work.enqueued', 'schedule_instance.failed'],
      );

      // The fire is claimed, finds its instance retired and settles as not fired: no session, no task.
      const fired = await env.scheduler.runDue({ limit: 5 });
      expect(fired).toEqual([
        expect.objectContaining({
          dueAt: '2026-05-02T09:00:00.000Z',
          outcome: 'not_fired',
          taskId: null,
          sessionId: null,
          error: { code: 'not_fired', message: 'no live instance for digest at 2026-05-02T09:00:00.000Z' },
        }),
      ]);
      expect(await env.scheduler.runDue({ limit: 5 })).toEqual([]);
      // Every host reads the schedule disabled from now on: nothing more fires.
      env.write('digest', `${DAILY}enabled: false\n`);
      env.clock.set(Date.parse('2026-05-04T12:00:00Z'));
      expect((await env.cycle()).fired).toEqual([]);
      expect(env.sessions).toEqual([]);
      expect(await eventTypes(env.store, 'work.')).toEqual(['work.enqueued', 'work.claimed', 'work.failed']);
      expect(await eventTypes(env.store, 'task.')).toEqual([]);
      const [instance] = await env.scheduler.history('digest');
      expect(instance).toMatchObject({
        dueAt: '2026-05-02T09:00:00.000Z',
        status: 'error',
        // The slot's work item is given to an instance only while it waits (scheduled).
        workId: held === 'A' ? null : fired[0]!.workId,
        error: { code: 'schedule_disabled' },
      });
      await expectCleanLog(env.store);
    },
  );
});
