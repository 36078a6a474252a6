import { type Clock, type IdGenerator, IdPrefix } from '@demiurge/contracts';
import { type AppendStream, commandLoop, type EventStore, loadAggregate, streamAppend } from '@demiurge/event-store';
import { checkEvents, deliveryLifecycle, taskFold, taskLifecycle, workLifecycle } from '@demiurge/lifecycle';
import { type OperatorStatus, operatorStatusReader } from '@demiurge/projector-operator-status';
import {
  assertCompletionScope,
  type CompletionConsumer,
  type PendingNotice,
  pendingNotices,
  type TakenNotices,
  takeNotices,
} from './completion-notices.js';
import type { DurableWorkRuntime, WorkClaim } from './durable-work.js';
import { NotFoundError } from './errors.js';
import { WorkKind } from './kinds.js';
import { assertCurrentClaim, loadWork } from './work-aggregate.js';

export interface HostWorkLifecycleOptions {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly work: DurableWorkRuntime;
}

/** The operator-readable status across work items, tasks and the outbox. */
/** One operator-readable view across work items, tasks and the outbox (the `operator-status` projection). */
export type { OperatorStatus };

/**
 * The unified lifecycle and observation seam (seed 003 HostWorkLifecycleRuntime): domain methods for
 * delivery sends, schedule fires and task-completion notices over {@link DurableWorkRuntime}, and one
 * operator status view. The specialised owners (task worker, delivery, scheduler) keep their jobs.
 *
 * @example
 * for (const { claim, taskId } of await host.claimTaskCompletions({ limit: 10 })) {
 *   await notifyParent(taskId);
 *   await host.acknowledgeTaskCompletion(claim, { sessionId: parentSessionId, via: 'my consumer' });
 * }
 */
export class HostWorkLifecycleRuntime {
  constructor(private readonly options: HostWorkLifecycleOptions) {}

  /**
   * Records a delivery intent: `delivery.queued` and its `delivery.send` work item in one commit,
   * with any `also` streams (the `message.recorded` it delivers).
   */
  async enqueueDelivery(
    spec: { sessionId: string; messageId: string; channel: string; conversationKey?: string },
    also: readonly AppendStream[] = [],
  ): Promise<{ deliveryId: string; workId: string }> {
    const deliveryId = this.options.ids.next(IdPrefix.delivery);
    const { workId, stream } = this.options.work.enqueueStream({
      kind: WorkKind.deliverySend,
      subjectId: deliveryId,
      payload: { deliveryId },
    });
    await this.options.store.append([
      {
        streamType: deliveryLifecycle.streamType,
        streamId: deliveryId,
        expectedVersion: 'no_stream',
        events: [{ type: 'delivery.queued', data: { deliveryId, workId, ...spec } }],
      },
      stream,
      ...also,
    ]);
    return { deliveryId, workId };
  }

  /** The work item of one schedule fire: exactly one per (core, schedule, due time), across processes. */
  enqueueScheduleFire(fire: {
    coreId: string;
    scheduleId: string;
    dueAt: string;
  }): Promise<{ workId: string; created: boolean }> {
    return this.options.work.ensure({
      kind: WorkKind.scheduleFire,
      subjectId: `${fire.coreId}/${fire.scheduleId}/${fire.dueAt}`,
      payload: fire,
    });
  }

  /** Claims pending task-completion notices, oldest first. */
  async claimTaskCompletions(options: {
    limit: number;
    leaseMs?: number;
  }): Promise<{ claim: WorkClaim; taskId: string }[]> {
    const claims = await this.options.work.claimDue({ kind: WorkKind.taskCompletion, ...options });
    return claims.map((claim) => ({ claim, taskId: (claim.payload as { taskId: string }).taskId }));
  }

  /**
   * Acknowledges a claimed completion notice: the work item and the task record it in one commit. Only the
   * session that submitted the task may: any other consumer is refused with {@link OutOfScopeError}.
   */
  acknowledgeTaskCompletion(claim: WorkClaim, consumer: CompletionConsumer): Promise<void> {
    const taskId = (claim.payload as { taskId: string }).taskId;
    return commandLoop(this.options.store, async () => {
      const item = await loadWork(this.options.store, claim.workId);
      if (item.state === 'none') throw new NotFoundError('work item', claim.workId);
      const task = await loadAggregate(this.options.store, taskFold, taskId);
      if (task.state.status === 'none') throw new NotFoundError('task', taskId);
      assertCompletionScope(taskId, task.state.sessionId, consumer);
      const workEvents = checkEvents(
        workLifecycle,
        item.state,
        [{ type: 'work.acknowledged', data: { workId: claim.workId, claimToken: claim.claimToken } }],
        claim.workId,
      );
      if (workEvents.length === 0) return { streams: [], result: undefined };
      assertCurrentClaim(item, claim.claimToken, new Date(this.options.clock.now()).toISOString());
      const taskEvents = checkEvents(
        taskLifecycle,
        task.state.status,
        [
          {
            type: 'task.completion_acknowledged',
            data: { taskId, consumer: `session ${consumer.sessionId} (${consumer.via})`, workId: claim.workId },
          },
        ],
        taskId,
      );
      return {
        streams: [
          streamAppend(workLifecycle.streamType, item, workEvents),
          streamAppend(taskLifecycle.streamType, task, taskEvents),
        ],
        result: undefined,
      };
    });
  }

  /**
   * The notices waiting for their parent session, oldest first (optionally of one session), each with the
   * text its model reads. `orphaned` ones (their task deleted or archived in an old log) are only settled.
   */
  pendingTaskCompletions(options: { sessionId?: string } = {}): Promise<PendingNotice[]> {
    return pendingNotices(this.noticeDeps(), options);
  }

  /**
   * Takes the session's pending notices for a turn's admission: the streams returned claim and acknowledge
   * each notice and must be appended in the admission's commit (never on their own).
   */
  takeTaskCompletions(consumer: CompletionConsumer): Promise<TakenNotices> {
    return takeNotices(this.noticeDeps(), consumer);
  }

  /**
   * Acknowledges the pending notices of one task for `consumer` (an operator dismissing them: no completion
   * turn will carry them), in one commit; returns how many. Only the task's own session may:
   * {@link OutOfScopeError} otherwise, before anything is written.
   */
  acknowledgeTaskNotices(taskId: string, consumer: CompletionConsumer): Promise<number> {
    return commandLoop(this.options.store, async () => {
      const task = await loadAggregate(this.options.store, taskFold, taskId);
      if (task.state.status === 'none') throw new NotFoundError('task', taskId);
      assertCompletionScope(taskId, task.state.sessionId, consumer);
      const taken = await takeNotices(this.noticeDeps(), consumer, { taskId });
      return { streams: [...taken.streams], result: taken.notices.length };
    });
  }

  /** Settles notices whose task is gone (deleted or archived before notices were settled): `work.cancelled`. */
  async settleOrphanedCompletions(): Promise<number> {
    let settled = 0;
    for (const notice of await this.pendingTaskCompletions()) {
      if (!notice.orphaned) continue;
      const item = await loadWork(this.options.store, notice.workId);
      if (item.state !== 'queued' && item.state !== 'retry_scheduled') continue;
      await this.options.work.cancel(notice.workId, 'its task was deleted or archived');
      settled++;
    }
    return settled;
  }

  private noticeDeps() {
    const { store, clock, ids, work } = this.options;
    return { store, clock, ids, owner: work.owner };
  }

  /** One operator-readable view across work items, tasks and the outbox, with each item's allowed actions. */
  async status(): Promise<OperatorStatus> {
    return operatorStatusReader(this.options.store).status();
  }
}
