import { afterEach, describe, expect, it } from 'vitest';
import { wallClock } from '../src/index.js';
import { expectCleanLog, openEnv, runUntil, type SchedulerEnv } from './harness.js';

let env: SchedulerEnv;
afterEach(() => env?.dispose());

/** Ticks every 40 minutes over three days around a transition; returns each fire as `dueAt local`. */
async function firesAround(cron: string, timezone: string, from: string, until: string) {
  env = await openEnv({ start: from, missedAfterMs: 60 * 60_000 });
  env.write('nightly', `cron: "${cron}"\ntimezone: ${timezone}\nprompt: Nightly run.\n`);
  await env.cycle();
  const fired = await runUntil(env, until, 40 * 60_000);
  expect(fired.every((f) => f.outcome === 'completed')).toBe(true);
  return fired.map((f) => `${f.dueAt} ${wallClock(Date.parse(f.dueAt), timezone)}`);
}

describe('daylight-saving transitions of 2026: once per wall-clock slot', () => {
  it('America/New_York spring forward: 02:00 does not exist on 03-08 and fires once, at 03:00', async () => {
    expect(await firesAround('0 2 * * *', 'America/New_York', '2026-03-06T18:00:00Z', '2026-03-09T18:00:00Z')).toEqual([
      '2026-03-07T07:00:00.000Z 2026-03-07 02:00:00',
      '2026-03-08T07:00:00.000Z 2026-03-08 03:00:00',
      '2026-03-09T06:00:00.000Z 2026-03-09 02:00:00',
    ]);
    await expectCleanLog(env.store);
  });

  it('America/New_York fall back: 01:30 happens twice on 11-01 and fires once', async () => {
    expect(await firesAround('30 1 * * *', 'America/New_York', '2026-10-30T18:00:00Z', '2026-11-02T18:00:00Z')).toEqual(
      [
        '2026-10-31T05:30:00.000Z 2026-10-31 01:30:00',
        '2026-11-01T05:30:00.000Z 2026-11-01 01:30:00',
        '2026-11-02T06:30:00.000Z 2026-11-02 01:30:00',
      ],
    );
  });

  it('Europe/Berlin: 02:30 fires once on both transition days', async () => {
    expect(await firesAround('30 2 * * *', 'Europe/Berlin', '2026-03-27T12:00:00Z', '2026-03-30T12:00:00Z')).toEqual([
      '2026-03-28T01:30:00.000Z 2026-03-28 02:30:00',
      '2026-03-29T01:30:00.000Z 2026-03-29 03:30:00',
      '2026-03-30T00:30:00.000Z 2026-03-30 02:30:00',
    ]);
    await env.dispose();
    expect(await firesAround('30 2 * * *', 'Europe/Berlin', '2026-10-23T12:00:00Z', '2026-10-26T12:00:00Z')).toEqual([
      '2026-10-24T00:30:00.000Z 2026-10-24 02:30:00',
      '2026-10-25T00:30:00.000Z 2026-10-25 02:30:00',
      '2026-10-26T01:30:00.000Z 2026-10-26 02:30:00',
    ]);
  });

  it('a tick inside the repeated hour after the first 01:30 does not schedule the second one', async () => {
    env = await openEnv({ start: '2026-11-01T05:00:00Z' });
    env.write('nightly', 'cron: "30 1 * * *"\ntimezone: America/New_York\nprompt: Nightly run.\n');
    await env.cycle();
    const fired = await runUntil(env, '2026-11-01T07:30:00Z', 5 * 60_000);
    expect(fired.map((f) => f.dueAt)).toEqual(['2026-11-01T05:30:00.000Z']);
    expect((await env.scheduler.history('nightly')).map((v) => v.dueLocal)).toEqual([
      '2026-11-01 01:30:00',
      '2026-11-02 01:30:00',
    ]);
  });
});
