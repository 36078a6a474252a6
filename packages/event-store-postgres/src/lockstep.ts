import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The store's statements one at a time, in call order, for a simulation's same-seed-same-log (the store's
 * `lockstep` option): each waits for the one before it, and after each the event loop turns once before the
 * next starts, so what its caller does next (and queues) is settled first. Answers then come back in call
 * order, never two in one read from the socket. Work started inside a step (an append's publication reading
 * a gap) runs at once, not behind itself.
 */
export class Lockstep {
  private tail: Promise<unknown> = Promise.resolve();
  private readonly inside = new AsyncLocalStorage<true>();

  /** Statements queued or running, with the turn after each. */
  pending = 0;

  run<T>(work: () => Promise<T>): Promise<T> {
    if (this.inside.getStore()) return work();
    this.pending++;
    const step = this.tail.then(() => this.inside.run(true, work));
    const done = () => turn().then(() => void this.pending--);
    this.tail = step.then(done, done);
    return step;
  }
}

function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
