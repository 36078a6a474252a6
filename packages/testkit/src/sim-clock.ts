import type { Timers } from '@demiurge/contracts';
import type { FakeClock } from '@demiurge/contracts/testing';

/**
 * Timers in a scenario's virtual time (the `Timers` port of the hosts it runs): a timer fires when the virtual
 * clock is advanced past it, never on the wall clock. An unanswered approval expires, and a paused run's poll
 * runs, when the simulator's `advance` says so, at the same virtual moment on every run of a seed.
 * @example
 * const timers = new VirtualTimers(createFakeClock());
 * timers.after(15 * 60_000, () => console.log('expired'));
 * timers.advance(3_600_000); // prints "expired"
 */
export class VirtualTimers implements Timers {
  private readonly pending = new Map<number, { readonly due: number; readonly callback: () => void }>();
  private next = 0;

  constructor(readonly clock: FakeClock) {}

  /**
   * A timer `ms` of virtual time from now. 0 or less fires as soon as possible (on the next turn of the event
   * loop, which the simulator's settling runs), as a real `setTimeout(fn, 0)` does.
   */
  after(ms: number, callback: () => void): () => void {
    if (ms <= 0) {
      let cancelled = false;
      setImmediate(() => {
        if (!cancelled) callback();
      });
      return () => {
        cancelled = true;
      };
    }
    const id = ++this.next;
    this.pending.set(id, { due: this.clock.now() + ms, callback });
    return () => {
      this.pending.delete(id);
    };
  }

  /**
   * Moves the virtual clock `ms` forward, then fires each timer due by then once, in due order (ties in the
   * order they were set), at the new time — as a real process's timers do after its clock jumped. A timer set
   * by one that fires is due later than now, so it waits for the next advance. Returns how many fired.
   */
  advance(ms: number): number {
    const now = this.clock.advance(ms);
    const due = [...this.pending]
      .filter(([, timer]) => timer.due <= now)
      .sort(([a, x], [b, y]) => x.due - y.due || a - b);
    let fired = 0;
    for (const [id, timer] of due) {
      if (!this.pending.delete(id)) continue; // cancelled by a timer that fired before it
      fired++;
      timer.callback();
    }
    return fired;
  }

  /** Timers set and not yet fired or cancelled. */
  get size(): number {
    return this.pending.size;
  }
}
