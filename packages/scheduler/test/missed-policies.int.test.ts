import { afterEach, describe, expect, it } from 'vitest';
import { expectCleanLog, openEnv, type SchedulerEnv } from './harness.js';

let env: SchedulerEnv;
afterEach(() => env?.dispose());

const HOURLY = 'cron: "0 * * * *"\nprompt: Check the queue.\n';
const h = (hour: number, minute = 0) =>
  `2026-05-01T${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}:00.000Z`;

/** Sees an hourly schedule at 08:30, then no scheduler runs until `resume`. */
async function downUntil(policy: string, resume: string): Promise<void> {
  env = await openEnv({ start: h(8, 30) });
  env.write('queue', `${HOURLY}${policy}`);
  await env.cycle();
  env.clock.set(Date.parse(resume));
}

const fires = async () => (await env.scheduler.runDue({ limit: 20 })).map((f) => [f.dueAt, f.outcome]);
const summary = async () =>
  (await env.scheduler.history('queue')).map((v) => [v.dueAt, v.status, v.error?.code ?? null]);

describe('missed-fire policies (scheduler down 09:00-12:30, hourly schedule)', () => {
  it('coalesce (default): one fire for everything missed, at the latest missed due time', async () => {
    await downUntil('', h(12, 30));
    const tick = await env.scheduler.tick();
    expect(tick.entries.map((e) => [e.action, e.dueAt])).toEqual([
      ['enqueued', h(12)],
      ['missed', h(9)],
      ['scheduled', h(13)],
    ]);
    expect(await fires()).toEqual([[h(12), 'completed']]);
    expect(await summary()).toEqual([
      [h(9), 'error', 'missed'],
      [h(12), 'completed', null],
      [h(13), 'scheduled', null],
    ]);
    expect((await env.scheduler.history('queue'))[0]!.error!.message).toMatch(
      /coalesced into the fire due at 2026-05-01T12:00:00.000Z \(3 missed due time\(s\) did not fire\)/,
    );
    await expectCleanLog(env.store);
  });

  it('skip: no missed due time fires; the cursor moves past them and the next one fires on time', async () => {
    await downUntil('missed: skip\n', h(12, 30));
    const tick = await env.scheduler.tick();
    expect(tick.entries.map((e) => [e.action, e.dueAt])).toEqual([
      ['missed', h(9)],
      ['missed', h(12)],
      ['scheduled', h(13)],
    ]);
    expect(await fires()).toEqual([]);
    env.clock.set(Date.parse(h(13)) + 5_000);
    await env.scheduler.tick();
    expect(await fires()).toEqual([[h(13), 'completed']]);
    expect(await summary()).toEqual([
      [h(9), 'error', 'missed'],
      [h(12), 'error', 'missed'],
      [h(13), 'completed', null],
      [h(14), 'scheduled', null],
    ]);
    expect((await env.scheduler.history('queue', { limit: 2 })).map((v) => v.dueAt)).toEqual([h(13), h(14)]);
    await expectCleanLog(env.store);
  });

  it('skip: a due time found in time still fires', async () => {
    await downUntil('missed: skip\n', h(12, 0));
    env.clock.advance(20_000);
    await env.scheduler.tick();
    expect(await fires()).toEqual([[h(12), 'completed']]);
    expect((await summary()).slice(0, 1)).toEqual([[h(9), 'error', 'missed']]);
  });

  it('catch_up: each missed due time fires, oldest first, up to catch_up_limit; older ones are skipped', async () => {
    await downUntil('missed: catch_up\ncatch_up_limit: 2\n', h(12, 30));
    const tick = await env.scheduler.tick();
    expect(tick.entries.map((e) => [e.action, e.dueAt])).toEqual([
      ['enqueued', h(11)],
      ['enqueued', h(12)],
      ['missed', h(9)],
      ['scheduled', h(13)],
    ]);
    expect(await fires()).toEqual([
      [h(11), 'completed'],
      [h(12), 'completed'],
    ]);
    expect((await env.scheduler.history('queue'))[0]!.error!.message).toMatch(/beyond catch_up_limit 2/);
    await expectCleanLog(env.store);
  });

  it('catch_up within the limit fires every missed due time', async () => {
    await downUntil('missed: catch_up\n', h(12, 30));
    await env.scheduler.tick();
    expect(await fires()).toEqual([9, 10, 11, 12].map((hour) => [h(hour), 'completed']));
  });

  it('a due time is missed only when first seen more than missedAfterMs late', async () => {
    await downUntil('missed: skip\n', h(9, 0));
    env.clock.advance(60_000); // exactly the default missedAfterMs: still in time
    await env.scheduler.tick();
    expect(await fires()).toEqual([[h(9), 'completed']]);
  });
});
