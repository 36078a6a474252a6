import type { GroupEntry, GroupOutcome } from './append-transaction.js';

/** Appends one transaction takes at most. */
const MAX_GROUP = 100;

/**
 * The store's group commit: appends (and decided appends) wait here for their turn; the first turn to run takes
 * every one waiting by then into one transaction. Turns run one after another through `serially`.
 */
export class GroupCommit {
  /** Appends waiting for their turn; the first turn to run takes them all (a group commit). */
  private readonly waiting: { entry: GroupEntry; resolve: (r: never) => void; reject: (e: unknown) => void }[] = [];

  constructor(
    private readonly deps: {
      /** One transaction of entries, then their events published in order. */
      readonly run: (entries: readonly GroupEntry[]) => Promise<GroupOutcome[]>;
      /** Runs a turn after the store's earlier ones (a closed store refuses it). */
      readonly serially: (work: () => Promise<void>) => Promise<void>;
      /** Names a broken connection (leaves other errors as they are). */
      readonly named: (err: unknown) => unknown;
    },
  ) {}

  /** Waits for a turn; resolves with the entry's result, or rejects with its refusal. */
  enqueue<T>(entry: GroupEntry): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ entry, resolve: resolve as (r: never) => void, reject });
      // Whichever of the queued turns runs first takes every append waiting by then (a group commit).
      this.deps
        .serially(() => this.appendWaiting())
        .catch((err: unknown) => {
          // The turn could not run (the store closed): whatever still waits fails with that.
          for (const w of this.waiting.splice(0)) w.reject(err);
        });
    });
  }

  /**
   * Appends what is waiting: together in one transaction (each checked in order, refusals returned to their
   * callers alone), or, when that transaction fails as a whole (a projector threw, an event id was taken, the
   * connection broke), each in a transaction of its own so that only the append at fault fails. An append with
   * an idempotency key always runs alone; appends commit in call order.
   */
  private async appendWaiting(): Promise<void> {
    const batch = this.waiting.splice(0, MAX_GROUP);
    if (batch.length === 0) return;
    // In call order: runs of appends without a key go together, each append with a key alone.
    const keyOf = (e: GroupEntry) => ('decided' in e ? undefined : e.idempotencyKey);
    const groups: (typeof batch)[] = [];
    for (const w of batch) {
      const last = groups[groups.length - 1];
      if (keyOf(w.entry) === undefined && last && keyOf(last[0]!.entry) === undefined) last.push(w);
      else groups.push([w]);
    }
    for (const group of groups) {
      let results: GroupOutcome[];
      try {
        results = await this.deps.run(group.map((w) => w.entry));
      } catch (err) {
        if (group.length === 1) {
          group[0]!.reject(this.deps.named(err));
          continue;
        }
        for (const w of group) {
          try {
            const [alone] = await this.deps.run([w.entry]);
            if (alone instanceof Error) w.reject(alone);
            else w.resolve(alone as never);
          } catch (e) {
            w.reject(this.deps.named(e));
          }
        }
        continue;
      }
      for (const [i, r] of results.entries()) {
        if (r instanceof Error) group[i]!.reject(r);
        else group[i]!.resolve(r as never);
      }
    }
  }
}
