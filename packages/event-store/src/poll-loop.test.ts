import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { pollLoop } from './poll-loop.js';

const tick = (ms = 10) => new Promise((r) => setTimeout(r, ms));

/** A round that waits until the test finishes it. */
function scripted() {
  const rounds: { finish: (value?: unknown) => void; fail: (error: Error) => void }[] = [];
  const round = () =>
    new Promise<unknown>((resolve, reject) => rounds.push({ finish: (v) => resolve(v), fail: (e) => reject(e) }));
  return { rounds, round };
}

describe('pollLoop', () => {
  it('runs at start, on wake (after the round in flight, once), on a wake event, and reports errors', async () => {
    const s = scripted();
    const errors: unknown[] = [];
    const events$ = new Subject<{ type: string }>();
    const loop = pollLoop({
      round: s.round,
      intervalMs: 60_000,
      onError: (e) => errors.push(e),
      events$,
      wakeOn: ['task.submitted'],
    });
    await tick();
    expect(s.rounds).toHaveLength(1);
    loop.wake();
    loop.wake(); // both wakes during the round in flight: one round follows it
    s.rounds[0]!.finish();
    await tick();
    expect(s.rounds).toHaveLength(2);
    s.rounds[1]!.fail(new Error('store busy'));
    await tick();
    expect(s.rounds).toHaveLength(2); // idle until the interval or a wake
    events$.next({ type: 'task.started' });
    await tick();
    expect(s.rounds).toHaveLength(2);
    events$.next({ type: 'task.submitted' });
    await tick();
    expect(s.rounds).toHaveLength(3);
    let closed = false;
    const closing = loop.close().then(() => {
      closed = true;
    });
    await tick();
    expect(closed).toBe(false); // waits for the round in flight
    s.rounds[2]!.finish();
    await closing;
    loop.wake();
    events$.next({ type: 'task.submitted' });
    await tick();
    expect(s.rounds).toHaveLength(3);
    expect(errors).toEqual([new Error('store busy')]);
  });

  it('polls every intervalMs, and at once after a round `again` says is full', async () => {
    const s = scripted();
    const loop = pollLoop({ round: s.round, intervalMs: 60_000, onError: () => {}, again: (n) => n === 'full' });
    await tick();
    s.rounds[0]!.finish('full');
    await tick();
    expect(s.rounds).toHaveLength(2);
    s.rounds[1]!.finish('partial');
    await tick(30);
    expect(s.rounds).toHaveLength(2);
    await loop.close();

    const fast = scripted();
    const polling = pollLoop({ round: fast.round, intervalMs: 5, onError: () => {} });
    for (let n = 1; n <= 3; n++) {
      for (let i = 0; i < 50 && fast.rounds.length < n; i++) await tick(5);
      fast.rounds[n - 1]!.finish();
    }
    const closing = polling.close();
    for (const round of fast.rounds) round.finish(); // a 4th round may have started meanwhile
    await closing;
    expect(fast.rounds.length).toBeGreaterThanOrEqual(3);
  });
});
