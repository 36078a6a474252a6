import { createHash } from 'node:crypto';
import { dumpProjections, type EventStore } from '@demiurge/event-store';
import { createLogVerifier } from '@demiurge/lifecycle';
import { deliveryStatusPrefix, outboxReader } from '@demiurge/projector-outbox';
import { runsReader } from '@demiurge/projector-runs';
import { checkInvariants, Invariant } from './invariants.js';
import { PausedRunsCheck } from './pause-check.js';
import { describeDifference, diffProjection } from './projection-diff.js';
import type { SimWorld } from './sim-world.js';

/** A store the checks can rebuild (the SQLite and PostgreSQL stores both can). */
export type CheckedStore = EventStore & { rebuild(): Promise<unknown>; readonly projectorNames: readonly string[] };

/** The count, among the event types of a scenario or batch, of the `run.resumed` that ended a `run.paused`. */
export const RESUMED_FROM_PAUSE = 'run.resumed (of a paused run)';

/** What the simulator knows was acknowledged to someone: the runs whose admission a caller was told of. */
export interface Acknowledged {
  readonly runs: readonly string[];
}

/**
 * The checks after every step, each problem one line: every stream through its lifecycle machine (with claim
 * fencing), a paused run starting no step until it is resumed ({@link PausedRunsCheck}), the seed invariants on the live read models, every projection equal to a rebuild from the log, no
 * effect performed twice (deliveries, tool effects, process starts), nothing acknowledged lost (a `sent`
 * delivery the sink never got, an admitted run missing from the log). The log is read once: each check
 * reads the events appended since the last one, and keeps the log's running hash.
 */
export class StepChecker {
  private readonly verifier = createLogVerifier({ fencing: true });
  private readonly pauses = new PausedRunsCheck();
  private readonly types = new Map<string, number>();

  /**
   * How many events of each type were checked so far (what a scenario exercised), and under
   * {@link RESUMED_FROM_PAUSE} how many of the `run.resumed` ended a pause.
   */
  get eventTypes(): ReadonlyMap<string, number> {
    return new Map([...this.types, [RESUMED_FROM_PAUSE, this.pauses.resumed]]);
  }
  private readonly hash = createHash('sha256');
  private position = 0;

  /** Events checked so far (the log's head at the last check). */
  get events(): number {
    return this.position;
  }

  /** SHA-256 over every event checked so far, in log order (see {@link logHash}). */
  digest(): string {
    return this.hash.copy().digest('hex');
  }

  /** Reads the events appended since the last call: through the machines, into the hash. */
  async readNew(store: EventStore): Promise<string[]> {
    const problems: string[] = [];
    for await (const e of store.iterate({ from: this.position + 1 })) {
      this.position = e.position;
      this.types.set(e.type, (this.types.get(e.type) ?? 0) + 1);
      this.hash.update(JSON.stringify(e));
      this.hash.update('\n');
      for (const v of this.verifier.check(e)) problems.push(`log: ${v.kind}: ${v.message}`);
      problems.push(...this.pauses.next(e));
    }
    return problems;
  }

  /** Every check; `rebuild: false` leaves out the (costly) projection rebuild. */
  async check(
    store: CheckedStore,
    world: SimWorld,
    acked: Acknowledged,
    now: number,
    options: { rebuild: boolean },
  ): Promise<string[]> {
    const before = this.position;
    const problems = await this.readNew(store);
    if (this.position === before && problems.length === 0 && !options.rebuild) return effectProblems(world);
    for (const f of await checkInvariants(store, now)) {
      // A live run whose lease ran out waits for recovery (a crashed owner, or virtual time that ran past the
      // heartbeats a real host sends): that is a state the runtime recovers from, not a broken invariant.
      if (f.invariant === Invariant.liveRunsHaveAnOwner) continue;
      problems.push(`invariant ${f.invariant}: ${f.message}`);
    }
    problems.push(...effectProblems(world));
    const outbox = outboxReader(store);
    for (const d of await outbox.byStatus.list({ prefix: deliveryStatusPrefix('sent') })) {
      if (!world.received.has(d.deliveryId)) {
        problems.push(`delivery ${d.deliveryId} is acknowledged (sent) but the sink never received it`);
      }
    }
    const runs = runsReader(store);
    for (const runId of acked.runs) {
      if (!(await runs.get(runId))) problems.push(`run ${runId} was admitted (acknowledged) but is not in the log`);
    }
    if (options.rebuild) problems.push(...(await rebuildDifferences(store)));
    return problems;
  }
}

/** No effect performed twice: each delivery received, tool effect performed and process started at most once. */
function effectProblems(world: SimWorld): string[] {
  const problems: string[] = [];
  for (const [what, counts] of [
    ['delivery', world.received],
    ['tool effect', world.toolEffects],
    ['process start', world.processStarts],
  ] as const) {
    for (const [key, n] of counts) if (n > 1) problems.push(`${what} ${key} performed ${n} times`);
  }
  return problems;
}

/** Every projection compared with a rebuild from the log (in place: equal read models rebuild to themselves). */
export async function rebuildDifferences(store: CheckedStore): Promise<string[]> {
  const live = await dumpProjections(store);
  await store.rebuild();
  const rebuilt = await dumpProjections(store);
  const out: string[] = [];
  for (const name of store.projectorNames) {
    for (const d of diffProjection(name, live[name] ?? {}, rebuilt[name] ?? {})) out.push(describeDifference(d));
  }
  return out;
}

/** The log's hash: SHA-256 over every event (position, ids, stream, type, data, meta, time) in order. */
export async function logHash(store: EventStore): Promise<{ hash: string; events: number }> {
  const hash = createHash('sha256');
  let events = 0;
  for await (const e of store.iterate()) {
    events++;
    hash.update(JSON.stringify(e));
    hash.update('\n');
  }
  return { hash: hash.digest('hex'), events };
}
