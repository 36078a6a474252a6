import { createFakeClock } from '@demiurge/contracts/testing';
import { describe, expect, it } from 'vitest';
import { VirtualTimers } from './sim-clock.js';

describe('VirtualTimers', () => {
  it('fires a timer only when the virtual clock is advanced past it, in due order, at the new time', () => {
    const clock = createFakeClock(0);
    const timers = new VirtualTimers(clock);
    const fired: string[] = [];
    timers.after(900_000, () => fired.push(`approval at ${clock.now()}`));
    timers.after(1_000, () => fired.push(`poll at ${clock.now()}`));
    expect(timers.advance(999)).toBe(0);
    expect(fired).toEqual([]);
    expect(timers.advance(3_600_000)).toBe(2);
    expect(fired).toEqual(['poll at 3600999', 'approval at 3600999']);
    expect(timers.size).toBe(0);
  });

  it('a cancelled timer never fires; a timer set by one that fires waits for the next advance', () => {
    const clock = createFakeClock(0);
    const timers = new VirtualTimers(clock);
    let polls = 0;
    const poll = () => {
      polls++;
      timers.after(1_000, poll);
    };
    timers.after(1_000, poll);
    const cancel = timers.after(500, () => {
      throw new Error('cancelled: must not fire');
    });
    cancel();
    timers.advance(3_600_000);
    expect(polls).toBe(1);
    timers.advance(1_000);
    expect(polls).toBe(2);
  });

  it('a timer of 0 ms or less fires on the next turn of the event loop, without an advance', async () => {
    const timers = new VirtualTimers(createFakeClock(0));
    let fired = 0;
    timers.after(0, () => fired++);
    timers.after(-5, () => fired++)();
    await new Promise((resolve) => setImmediate(resolve));
    expect(fired).toBe(1);
  });
});
