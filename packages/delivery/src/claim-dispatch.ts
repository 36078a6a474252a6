import type { Clock, NewEvent } from '@demiurge/contracts';
import { StaleClaimError, type WorkClaim } from '@demiurge/control-plane';
import type { DeliveryEventType, DeliveryIntent } from '@demiurge/lifecycle';
import type { DeliveryReceipt } from './delivery-adapter.js';
import { type DeliveryAggregate, findMessage, loadDelivery } from './delivery-aggregate.js';
import { type CommitContext, commitDelivery, commitFenced, type Decision } from './delivery-commit.js';
import { DeliveryFailureCode } from './errors.js';
import { classifyFailure, type FailureClass, sendUntil } from './failure.js';
import type { RetryPolicy } from './retry-policy.js';
import type { SessionInteractionRouter, SessionRoute } from './session-interaction-router.js';

/** The status a dispatch left a delivery in; `stale` when the claim was lost before an outcome was recorded. */
export type DispatchStatus = 'sent' | 'failed' | 'unrouted' | 'unknown' | 'stale';

/** What one claimed delivery came to. */
export interface DispatchOutcome {
  readonly deliveryId: string;
  readonly workId: string;
  /** The work item's attempt (claim) number. */
  readonly attempt: number;
  readonly status: DispatchStatus;
  /** When its work item is due again; null when it is not (sent, unknown, or failed for good). */
  readonly retryAt: string | null;
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly externalRef: string | null;
}

/** What dispatching needs from its runtime. */
export interface DispatchDeps {
  readonly ctx: CommitContext;
  readonly clock: Clock;
  readonly router: SessionInteractionRouter;
  readonly retry: RetryPolicy;
  readonly unroutedRetry: RetryPolicy;
  readonly failureHistory: boolean;
}

type FailureData = { readonly code: string; readonly message: string };

const iso = (ms: number) => new Date(ms).toISOString();
/** Delivery states a send may start from. */
const STARTABLE: ReadonlySet<string> = new Set(['queued', 'failed', 'unrouted']);

/** Appends the delivery events that make a delivery agree with its work item (see `mirrorEvents`). */
export function syncDelivery(ctx: CommitContext, deliveryId: string): Promise<NewEvent<DeliveryEventType>[]> {
  return commitDelivery(ctx, deliveryId);
}

/** The dispatch of one claimed `delivery.send` work item, from its delivery's state to a recorded outcome. */
export class ClaimDispatch {
  private readonly deliveryId: string;

  constructor(
    private readonly deps: DispatchDeps,
    private readonly claim: WorkClaim,
  ) {
    this.deliveryId = (claim.payload as { deliveryId: string }).deliveryId;
  }

  async run(signal: AbortSignal | undefined): Promise<DispatchOutcome> {
    const { ctx } = this.deps;
    let delivery = await loadDelivery(ctx.store, this.deliveryId);
    // An operator may have resolved the work item (`retry`) through DurableWorkRuntime: mirror that first.
    if (delivery.state.status === 'unknown' || delivery.state.status === 'sending') {
      await syncDelivery(ctx, this.deliveryId);
      delivery = await loadDelivery(ctx.store, this.deliveryId);
    }
    const { queued, status } = delivery.state;
    if (!queued) {
      return this.failWork({
        code: DeliveryFailureCode.DeliveryNotFound,
        message: `work ${this.claim.workId} names delivery ${this.deliveryId}, which was never queued`,
      });
    }
    if (!STARTABLE.has(status)) {
      return this.failWork({
        code: DeliveryFailureCode.DeliveryState,
        message: `delivery ${this.deliveryId} is ${status}; no send may start from it`,
      });
    }
    const message = await findMessage(ctx.store, queued.sessionId, queued.messageId);
    if (!message) {
      const error = {
        code: DeliveryFailureCode.MessageNotFound,
        message: `message ${queued.messageId} is not in session ${queued.sessionId}`,
      };
      return this.fenced(this.outcome('failed', { error }), (d) => ({
        work: [this.workFailed(error, null)],
        delivery: { kind: 'fail_unsendable', deliveryId: this.deliveryId, error },
        note: this.note(d, `failed: ${error.message}`),
      }));
    }
    const route = this.deps.router.route(queued.sessionId, queued.channel);
    if (!route?.isLive()) {
      const reason = route
        ? `the ${queued.channel} route of session ${queued.sessionId} is not live`
        : `no ${queued.channel} route is bound for session ${queued.sessionId}`;
      return this.unrouted(reason, false);
    }
    // Intent before effect: from this commit on, the work item is never claimed again.
    try {
      await commitFenced(ctx, this.claim, this.deliveryId, () => ({
        work: [{ type: 'work.sending', data: { workId: this.claim.workId, claimToken: this.claim.claimToken } }],
        delivery: { kind: 'start_send', deliveryId: this.deliveryId },
      }));
    } catch (err) {
      if (err instanceof StaleClaimError) return this.outcome('stale', { error: err.toJSON() });
      throw err;
    }
    return this.send(queued, route, message.text, signal);
  }

  private async send(
    queued: DeliveryIntent,
    route: SessionRoute,
    text: string,
    signal: AbortSignal | undefined,
  ): Promise<DispatchOutcome> {
    const { sessionId, messageId } = queued;
    const deliveryId = this.deliveryId;
    // The send must end before its lease does: past it, recovery may already have called it unknown.
    const leaseLeft = Math.max(0, Date.parse(this.claim.leaseUntil) - this.deps.clock.now());
    const deadline = AbortSignal.timeout(leaseLeft);
    let receipt: DeliveryReceipt;
    try {
      receipt = await sendUntil(
        route,
        { deliveryId, sessionId, messageId, text, idempotencyKey: deliveryId },
        signal ? AbortSignal.any([signal, deadline]) : deadline,
      );
    } catch (err) {
      return this.recordFailure(classifyFailure(err, route.channel));
    }
    const externalRef = receipt.externalRef;
    return this.fenced(
      this.outcome('sent', { externalRef: externalRef ?? null }),
      () => ({
        work: [
          {
            type: 'work.succeeded',
            data: {
              workId: this.claim.workId,
              claimToken: this.claim.claimToken,
              ...(externalRef ? { externalRef } : {}),
            },
          },
        ],
        delivery: { kind: 'record_sent', deliveryId, externalId: externalRef },
      }),
      true,
    );
  }

  /** A raised adapter: unknown (never re-sent), unrouted, or failed (with a retry time when retryable). */
  private recordFailure(failure: FailureClass): Promise<DispatchOutcome> {
    const { error } = failure;
    const { workId, claimToken } = this.claim;
    if (failure.kind === 'unknown') {
      return this.fenced(
        this.outcome('unknown', { error }),
        () => ({
          work: [{ type: 'work.unknown', data: { workId, claimToken, reason: error.message } }],
          delivery: { kind: 'record_unknown', deliveryId: this.deliveryId, reason: error.message },
        }),
        true,
      );
    }
    if (failure.kind === 'unrouted') return this.unrouted(error.message, true);
    const delayMs = failure.retryable ? this.deps.retry(this.claim.attempt) : undefined;
    const retryAt =
      delayMs === undefined ? null : iso(this.deps.clock.now() + Math.max(delayMs, failure.retryAfterMs ?? 0));
    return this.fenced(
      this.outcome('failed', { error, retryAt }),
      (d) => ({
        work: [this.workFailed(error, retryAt)],
        delivery: { kind: 'record_failed', deliveryId: this.deliveryId, error },
        note: retryAt ? undefined : this.note(d, `failed for good (attempt ${this.claim.attempt}): ${error.message}`),
      }),
      true,
    );
  }

  /**
   * No live route: `delivery.unrouted` and the work fails with the unrouted backoff. The machine allows
   * unrouted from queued and sending (a failed delivery passes through sending; an unrouted one stays).
   */
  private unrouted(reason: string, afterSending: boolean): Promise<DispatchOutcome> {
    const delayMs = this.deps.unroutedRetry(this.claim.attempt);
    const retryAt = delayMs === undefined ? null : iso(this.deps.clock.now() + delayMs);
    const error = { code: DeliveryFailureCode.NoRoute, message: reason };
    return this.fenced(
      this.outcome('unrouted', { error, retryAt }),
      (d) => ({
        work: [this.workFailed(error, retryAt)],
        delivery: { kind: 'record_unrouted', deliveryId: this.deliveryId, reason },
        note: retryAt ? undefined : this.note(d, `was not delivered after ${this.claim.attempt} attempts: ${reason}`),
      }),
      afterSending,
    );
  }

  /** The work item fails for good with no delivery event (its delivery is missing or in no state to send). */
  private failWork(error: FailureData): Promise<DispatchOutcome> {
    return this.fenced(this.outcome('failed', { error }), () => ({
      work: [this.workFailed(error, null)],
      delivery: null,
    }));
  }

  /**
   * Commits a decision fenced by the claim. Once the send was attempted (`afterSending`), a lost claim
   * means recovery settled the item meanwhile: the delivery is made to agree with it, and the outcome is `stale`.
   */
  private async fenced(
    result: DispatchOutcome,
    decide: (delivery: DeliveryAggregate) => Decision,
    afterSending = false,
  ): Promise<DispatchOutcome> {
    try {
      await commitFenced(this.deps.ctx, this.claim, this.deliveryId, decide);
      return result;
    } catch (err) {
      if (!(err instanceof StaleClaimError)) throw err;
      if (afterSending) await syncDelivery(this.deps.ctx, this.deliveryId);
      const lost = `${err.message}; the ${result.status} outcome was not recorded`;
      return { ...result, status: 'stale', retryAt: null, error: { code: err.code, message: lost } };
    }
  }

  private workFailed(error: FailureData, retryAt: string | null) {
    const { workId, claimToken } = this.claim;
    return { type: 'work.failed' as const, data: { workId, claimToken, error, ...(retryAt ? { retryAt } : {}) } };
  }

  private note(delivery: DeliveryAggregate, what: string): string | undefined {
    const { queued } = delivery.state;
    if (!this.deps.failureHistory || !queued) return undefined;
    const { messageId, channel } = queued;
    return `Delivery ${delivery.streamId} of message ${messageId} on the ${channel} channel ${what}`;
  }

  private outcome(status: DispatchStatus, more: Partial<DispatchOutcome> = {}): DispatchOutcome {
    return {
      deliveryId: this.deliveryId,
      workId: this.claim.workId,
      attempt: this.claim.attempt,
      status,
      retryAt: null,
      error: null,
      externalRef: null,
      ...more,
    };
  }
}
