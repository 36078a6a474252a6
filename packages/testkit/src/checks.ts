import { createHash } from 'node:crypto';
import { dumpProjections, type EventStore } from '@demiurge/event-store';
import { verifyLog } from '@demiurge/lifecycle';
import { deliveryStatusPrefix, outboxReader } from '@demiurge/projector-outbox';
import { runsReader } from '@demiurge/projector-runs';
import { checkInvariants, Invariant } from './invariants.js';
import { describeDifference, diffProjection } from './projection-diff.js';
import type { SimWorld } from './sim-world.js';

/** A store the checks can rebuild (the SQLite and PostgreSQL stores both can). */
export type CheckedStore = EventStore & { rebuild(): Promise<unknown>; readonly projectorNames: readonly string[] };

/** What the simulator knows was acknowledged to someone: the runs whose admission a caller was told of. */
export interface Acknowledged {
  readonly runs: readonly string[];
}

/**
 * The checks after every step, each problem one line: every stream through its lifecycle machine (with claim
 * fencing), the seed invariants on the live read models, every projection equal to a rebuild from the log, no
 * effect performed twice (deliveries, tool effects, process starts), nothing acknowledged lost (a `sent`
 * delivery the sink never got, an admitted run missing from the log).
 */
export async function checkStep(
  store: CheckedStore,
  world: SimWorld,
  acked: Acknowledged,
  now: number,
): Promise<string[]> {
  const problems: string[] = [];
  const log = await verifyLog(store.iterate(), { maxViolations: 5, fencing: true });
  for (const v of log.violations) problems.push(`log: ${v.kind}: ${v.message}`);
  for (const f of await checkInvariants(store, now)) {
    // A live run whose lease ran out waits for recovery (a crashed owner, or virtual time that ran past the
    // heartbeats a real host sends): that is a state the runtime recovers from, not a broken invariant.
    if (f.invariant === Invariant.liveRunsHaveAnOwner) continue;
    problems.push(`invariant ${f.invariant}: ${f.message}`);
  }
  for (const [what, counts] of [
    ['delivery', world.received],
    ['tool effect', world.toolEffects],
    ['process start', world.processStarts],
  ] as const) {
    for (const [key, n] of counts) if (n > 1) problems.push(`${what} ${key} performed ${n} times`);
  }
  const outbox = outboxReader(store);
  for (const d of await outbox.byStatus.list({ prefix: deliveryStatusPrefix('sent') })) {
    const resolvedSent = (await outbox.get(d.deliveryId))?.resolution?.decision === 'sent';
    if (!world.received.has(d.deliveryId) && !resolvedSent) {
      problems.push(`delivery ${d.deliveryId} is acknowledged (sent) but the sink never received it`);
    }
  }
  const runs = runsReader(store);
  for (const runId of acked.runs) {
    if (!(await runs.get(runId))) problems.push(`run ${runId} was admitted (acknowledged) but is not in the log`);
  }
  problems.push(...(await rebuildDifferences(store)));
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
