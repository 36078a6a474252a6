import type { RecordedEvent } from '@demiurge/contracts';
import { type EventStore, type Loaded, loadAggregate } from '@demiurge/event-store';
import { LEASED_WORK_STATES, type WorkFacts, type WorkPayload, type WorkState, workFold } from '@demiurge/lifecycle';
import type { WorkItemView } from '@demiurge/projector-work-items';
import { StaleClaimError } from './errors.js';
import type { KindRegistry } from './kinds.js';

/**
 * A work item as its stream says: the machine's state plus the facts a claim is checked against, from the
 * one work item fold (`workFold` in `@demiurge/lifecycle`, shared with the work-items projector).
 */
export interface WorkAggregate extends Loaded<WorkState> {
  /** Every fact of the fold: the decisions ({@link decideWork}) read these. */
  readonly facts: WorkFacts;
  readonly kind: string | null;
  readonly subjectId: string | null;
  readonly payload: WorkPayload | null;
  /** When it may next be claimed. */
  readonly dueAt: string | null;
  readonly claimToken: string | null;
  readonly owner: string | null;
  /** The current (or last) claim's attempt number: how many times it was claimed. */
  readonly attempt: number;
  readonly leaseUntil: string | null;
}

/** Whether a state holds a lease (a live claim). */
export const isLeased = (state: WorkState): boolean => LEASED_WORK_STATES.includes(state);

/**
 * Loads a work item with the one work item fold: the machine checks every event, and an event naming a
 * stale claim token changes nothing.
 */
export async function loadWork(store: EventStore, workId: string): Promise<WorkAggregate> {
  const loaded = await loadAggregate(store, workFold, workId);
  return aggregateOf(loaded);
}

/**
 * The item after `appended`, its own events just committed at the versions after `item.version`: what
 * {@link loadWork} reads when nobody else has written to the item since. A decision taken from it appends with
 * its version as the expected version, so a write by anyone else in between is a version conflict.
 */
export function afterAppend(item: WorkAggregate, appended: readonly RecordedEvent[]): WorkAggregate {
  const mine = appended.filter((e) => e.streamId === item.streamId);
  let facts = item.facts;
  for (const event of mine) facts = workFold.evolve(facts, event, item.streamId);
  return aggregateOf({
    streamId: item.streamId,
    state: facts,
    version: mine[mine.length - 1]?.streamVersion ?? item.version,
    events: [...item.events, ...mine],
  });
}

/**
 * The item as the work-items read model holds it (`view`, which keeps every fact of the fold) at stream version
 * `version`: what {@link loadWork} reads when the read model is current (under the PostgreSQL store's log-head
 * lock, where a claim is decided from it). `events` is empty: no decision reads them.
 */
export function workFromView(view: WorkItemView, version: number): WorkAggregate {
  const facts: WorkFacts = {
    status: view.status,
    workId: view.workId,
    kind: view.kind,
    subjectId: view.subjectId,
    payload: view.payload,
    attempts: view.attempts,
    claimToken: view.claimToken,
    owner: view.owner,
    leaseUntil: view.leaseUntil,
    nextAttemptAt: view.nextAttemptAt,
    dueAt: view.dueAt,
    lastError: view.lastError,
    externalRef: view.externalRef,
    enqueuedAt: view.enqueuedAt,
  };
  return aggregateOf({ streamId: view.workId, state: facts, version, events: [] });
}

/** Built field by field (no spread of `loaded`): every claim and command makes one or two of these. */
function aggregateOf(loaded: Loaded<WorkFacts>): WorkAggregate {
  const facts = loaded.state;
  return {
    streamId: loaded.streamId,
    version: loaded.version,
    events: loaded.events,
    state: facts.status,
    facts,
    kind: facts.kind,
    subjectId: facts.subjectId,
    payload: facts.payload,
    dueAt: facts.dueAt,
    claimToken: facts.claimToken,
    owner: facts.owner,
    attempt: facts.attempts,
    leaseUntil: facts.leaseUntil,
  };
}

/**
 * Throws {@link StaleClaimError} unless `claimToken` is the item's current claim and its lease has not
 * run out at `now` (a `sending` item keeps its claimant: it can never be claimed again anyway).
 */
export function assertClaimOf(work: WorkFacts, workId: string, claimToken: string, now: string): void {
  if (work.claimToken !== claimToken) {
    const why = work.claimToken ? 'a newer claim holds it' : `it is ${work.status} and holds no claim`;
    throw new StaleClaimError(workId, claimToken, why);
  }
  if (work.status !== 'sending' && work.leaseUntil !== null && work.leaseUntil < now) {
    throw new StaleClaimError(workId, claimToken, `its lease expired at ${work.leaseUntil}`);
  }
}

/** {@link assertClaimOf} on a loaded item. */
export function assertCurrentClaim(item: WorkAggregate, claimToken: string, now: string): void {
  assertClaimOf(item.facts, item.streamId, claimToken, now);
}

/** Why an item's payload cannot be executed (unknown kind, or not matching its kind's schema), if it cannot. */
export function payloadProblem(kinds: KindRegistry, item: Pick<WorkAggregate, 'kind' | 'payload'>): string | undefined {
  if (!item.kind || !kinds.has(item.kind)) return `unknown work kind ${JSON.stringify(item.kind)}`;
  const result = kinds.schema(item.kind).safeParse(item.payload ?? undefined);
  if (result.success) return undefined;
  const issue = result.error.issues[0];
  return `payload does not match ${item.kind}: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`;
}
