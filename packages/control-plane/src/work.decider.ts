import type { NewEvent } from '@demiurge/contracts';
import {
  checkEvents,
  initialWorkFacts,
  LEASED_WORK_STATES,
  type WorkEventType,
  type WorkFacts,
  workFold,
  workLifecycle,
} from '@demiurge/lifecycle';
import { NotFoundError, StaleClaimError } from './errors.js';
import { assertClaimOf } from './work-aggregate.js';

/** A failure as `work.failed` carries it. */
type WorkFailure = { readonly code: string; readonly message: string };

/**
 * The commands on one work item (claiming aside: `DurableWorkRuntime` claims). A claimant's command names its
 * claim token and the time (`now`, ISO) its lease is checked at.
 */
export type WorkCommand =
  | {
      readonly type: 'heartbeat';
      readonly workId: string;
      readonly claimToken: string;
      readonly now: string;
      readonly leaseUntil: string;
    }
  | { readonly type: 'mark_running'; readonly workId: string; readonly claimToken: string; readonly now: string }
  | { readonly type: 'mark_sending'; readonly workId: string; readonly claimToken: string; readonly now: string }
  | {
      readonly type: 'succeed';
      readonly workId: string;
      readonly claimToken: string;
      readonly now: string;
      readonly externalRef?: string;
    }
  | {
      readonly type: 'fail';
      readonly workId: string;
      readonly claimToken: string;
      readonly now: string;
      readonly error: WorkFailure;
      readonly retryAt?: string;
    }
  | {
      readonly type: 'mark_unknown';
      readonly workId: string;
      readonly claimToken: string;
      readonly now: string;
      readonly reason: string;
    }
  | { readonly type: 'cancel'; readonly workId: string; readonly reason: string }
  | {
      readonly type: 'resolve';
      readonly workId: string;
      readonly decision: 'sent' | 'failed' | 'retry';
      readonly retryAt?: string;
      readonly note?: string;
    }
  /** With a claim token, it must be the current claim's (a settled item takes any). */
  | { readonly type: 'acknowledge'; readonly workId: string; readonly claimToken?: string }
  /** Records a lease that ran out by `now`; nothing when the item holds no lease or it is live. */
  | { readonly type: 'expire_lease'; readonly workId: string; readonly now: string };

/** The events a command wants, before the machine checks them. */
function wanted(command: WorkCommand, work: WorkFacts): NewEvent<WorkEventType>[] {
  const { workId } = command;
  switch (command.type) {
    case 'heartbeat':
    case 'mark_running':
    case 'mark_sending':
    case 'succeed':
    case 'fail':
    case 'mark_unknown': {
      const { claimToken } = command;
      assertClaimOf(work, workId, claimToken, command.now);
      switch (command.type) {
        case 'heartbeat':
          return [{ type: 'work.heartbeat', data: { workId, claimToken, leaseUntil: command.leaseUntil } }];
        case 'mark_running':
          return [{ type: 'work.running', data: { workId, claimToken } }];
        case 'mark_sending':
          return [{ type: 'work.sending', data: { workId, claimToken } }];
        case 'succeed': {
          const { externalRef } = command;
          return [{ type: 'work.succeeded', data: { workId, claimToken, ...(externalRef ? { externalRef } : {}) } }];
        }
        case 'fail': {
          const { error, retryAt } = command;
          return [{ type: 'work.failed', data: { workId, claimToken, error, ...(retryAt ? { retryAt } : {}) } }];
        }
        case 'mark_unknown':
          return [{ type: 'work.unknown', data: { workId, claimToken, reason: command.reason } }];
      }
      break;
    }
    case 'cancel':
      return [{ type: 'work.cancelled', data: { workId, reason: command.reason } }];
    case 'resolve': {
      const { decision, retryAt, note } = command;
      return [
        {
          type: 'work.resolved',
          data: { workId, decision, ...(retryAt ? { retryAt } : {}), ...(note ? { note } : {}) },
        },
      ];
    }
    case 'acknowledge': {
      const { claimToken } = command;
      if (claimToken !== undefined && work.claimToken !== null && work.claimToken !== claimToken) {
        throw new StaleClaimError(workId, claimToken, 'another claim holds the item now');
      }
      return [{ type: 'work.acknowledged', data: { workId, ...(claimToken ? { claimToken } : {}) } }];
    }
    case 'expire_lease':
      return [];
  }
}

/**
 * Decides a work item command from the item's facts (the work item fold's): the events to append, checked
 * by the work machine (`IllegalTransitionError` for a refused one; an idempotent repeat, such as a second
 * cancel, appends nothing). Pure: `DurableWorkRuntime` loads, decides with this and appends.
 * Throws `NotFoundError` for an item never enqueued and `StaleClaimError` for a claim that no longer holds it.
 * @example
 * decideWork({ type: 'cancel', workId, reason: 'not needed' }, item.facts); // [{ type: 'work.cancelled', ... }]
 */
export function decideWork(command: WorkCommand, work: WorkFacts): NewEvent<WorkEventType>[] {
  const { workId } = command;
  if (command.type === 'expire_lease') {
    const { claimToken, leaseUntil } = work;
    const live = leaseUntil === null || leaseUntil >= command.now;
    if (!LEASED_WORK_STATES.includes(work.status) || claimToken === null || live) return [];
    const expired: NewEvent<WorkEventType> = {
      type: 'work.lease_expired',
      data: { workId, claimToken, attempt: work.attempts },
    };
    return checkEvents(workLifecycle, work.status, [expired], workId);
  }
  if (work.status === 'none') throw new NotFoundError('work item', workId);
  return checkEvents(workLifecycle, work.status, wanted(command, work), workId);
}

/**
 * The work item decider: {@link decideWork} over the work item fold (`workFold`), for given/when/then
 * specifications (`deciderSpecification(workDecider)` in `@demiurge/lifecycle/testing`).
 */
export const workDecider = {
  initialState: initialWorkFacts,
  decide: decideWork,
  evolve: (work: WorkFacts, event: Parameters<typeof workFold.evolve>[1]): WorkFacts => workFold.evolve(work, event),
};
