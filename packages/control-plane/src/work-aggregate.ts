import { asDomainEvent } from '@demiurge/contracts';
import { type EventStore, type Loaded, loadAggregate } from '@demiurge/event-store';
import { type WorkState, workLifecycle } from '@demiurge/lifecycle';
import { StaleClaimError } from './errors.js';
import type { KindRegistry } from './kinds.js';

/** A work item as its stream says: the machine's state plus the facts a claim is checked against. */
export interface WorkAggregate extends Loaded<WorkState> {
  readonly kind: string | null;
  readonly subjectId: string | null;
  readonly payload: unknown;
  /** When it may next be claimed. */
  readonly dueAt: string | null;
  readonly claimToken: string | null;
  readonly owner: string | null;
  readonly attempt: number;
  readonly leaseUntil: string | null;
}

const LEASED: readonly WorkState[] = ['claimed', 'running', 'sending'];

/** Whether a state holds a lease (a live claim). */
export const isLeased = (state: WorkState): boolean => LEASED.includes(state);

/** Loads a work item by folding its stream through the work machine. */
export async function loadWork(store: EventStore, workId: string): Promise<WorkAggregate> {
  const loaded = await loadAggregate(store, workLifecycle, workId);
  let kind: string | null = null;
  let subjectId: string | null = null;
  let payload: unknown = null;
  let dueAt: string | null = null;
  let claimToken: string | null = null;
  let owner: string | null = null;
  let attempt = 0;
  let leaseUntil: string | null = null;
  for (const recorded of loaded.events) {
    const event = asDomainEvent(recorded);
    switch (event.type) {
      case 'work.enqueued':
        kind = event.data.kind;
        subjectId = event.data.subjectId;
        payload = event.data.payload ?? null;
        dueAt = event.data.notBefore ?? event.recordedAt;
        break;
      case 'work.claimed':
        claimToken = event.data.claimToken;
        owner = event.data.owner;
        attempt = event.data.attempt;
        leaseUntil = event.data.leaseUntil;
        break;
      case 'work.heartbeat':
        leaseUntil = event.data.leaseUntil;
        break;
      case 'work.failed':
        if (event.data.retryAt) dueAt = event.data.retryAt;
        break;
      case 'work.lease_expired':
        dueAt = event.recordedAt;
        break;
      case 'work.resolved':
        if (event.data.decision === 'retry') dueAt = event.data.retryAt ?? event.recordedAt;
        break;
    }
  }
  const leased = isLeased(loaded.state);
  return {
    ...loaded,
    kind,
    subjectId,
    payload,
    dueAt,
    claimToken: leased ? claimToken : null,
    owner: leased ? owner : null,
    attempt,
    leaseUntil: leased ? leaseUntil : null,
  };
}

/**
 * Throws {@link StaleClaimError} unless `claimToken` is the item's current claim and its lease has not
 * run out at `now` (a `sending` item keeps its claimant: it can never be claimed again anyway).
 */
export function assertCurrentClaim(item: WorkAggregate, claimToken: string, now: string): void {
  if (item.claimToken !== claimToken) {
    const why = item.claimToken ? 'a newer claim holds it' : `it is ${item.state} and holds no claim`;
    throw new StaleClaimError(item.streamId, claimToken, why);
  }
  if (item.state !== 'sending' && item.leaseUntil !== null && item.leaseUntil < now) {
    throw new StaleClaimError(item.streamId, claimToken, `its lease expired at ${item.leaseUntil}`);
  }
}

/** Why an item's payload cannot be executed (unknown kind, or not matching its kind's schema), if it cannot. */
export function payloadProblem(kinds: KindRegistry, item: WorkAggregate): string | undefined {
  if (!item.kind || !kinds.has(item.kind)) return `unknown work kind ${JSON.stringify(item.kind)}`;
  const result = kinds.schema(item.kind).safeParse(item.payload ?? undefined);
  if (result.success) return undefined;
  const issue = result.error.issues[0];
  return `payload does not match ${item.kind}: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`;
}
