import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The store's work one step at a time, for a simulation's same-seed-same-log (the store's `lockstep` option):
 * reads and append turns in the order they reach this queue (an append's turn after the store's earlier turns,
 * taking every append waiting by then), each after the one before it has answered and the event loop has turned
 * once, so what its caller did next (and queued) is settled first. The order answers come back in then depends on
 * the calls alone, never on the server's timing or on two answers arriving in one read from the socket. Work
 * started inside a step (an append's publication reading a gap) runs at once, not behind itself.
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
