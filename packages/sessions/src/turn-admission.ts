/**
 * One turn at a time per session, different sessions concurrently (in this process). A second input
 * for a busy session waits its turn in arrival order; with `interrupt`, the caller's `onBusy` runs first
 * (it cancels the running turn) and the input then waits for that turn to finish.
 */
export class TurnAdmission {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly busy = new Map<string, number>();

  /** Whether a turn is running or queued for the session in this process. */
  isBusy(sessionId: string): boolean {
    return (this.busy.get(sessionId) ?? 0) > 0;
  }

  async run<T>(sessionId: string, work: () => Promise<T>, onBusy?: () => Promise<void>): Promise<T> {
    if (this.isBusy(sessionId) && onBusy) await onBusy();
    const previous = this.tails.get(sessionId) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => mine);
    this.tails.set(sessionId, tail);
    this.busy.set(sessionId, (this.busy.get(sessionId) ?? 0) + 1);
    try {
      await previous;
      return await work();
    } finally {
      release();
      const left = (this.busy.get(sessionId) ?? 1) - 1;
      if (left === 0) this.busy.delete(sessionId);
      else this.busy.set(sessionId, left);
      if (this.tails.get(sessionId) === tail) this.tails.delete(sessionId);
    }
  }
}
