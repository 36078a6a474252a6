import type { Actor, Clock, IdGenerator } from '@demiurge/contracts';
import {
  type DurableWorkRuntime,
  loadWork,
  type RuntimeControlPlane,
  StaleClaimError,
  type WorkClaim,
} from '@demiurge/control-plane';
import { type AppendStream, commandLoop, type EventStore, streamAppend } from '@demiurge/event-store';
import { checkEvents, scheduleInstanceLifecycle, workLifecycle } from '@demiurge/lifecycle';
import type { FireHandler, FireResult, ScheduledFire, StartSessionSpec } from './fire-types.js';
import type { InstanceError, InstanceLedger } from './instance-ledger.js';
import type { ScheduleDelivery } from './schedule-file.js';
import { decideScheduleInstance } from './schedule-instance.decider.js';
import type { ScheduleInstanceView } from './schedule-instance.view.js';

export interface FireDeps {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly ledger: InstanceLedger;
  readonly work: DurableWorkRuntime;
  readonly controlPlane: RuntimeControlPlane;
  readonly owner: string;
  readonly actor: Actor;
  readonly startSession: (spec: StartSessionSpec) => Promise<{ sessionId: string }>;
  readonly fire: FireHandler | undefined;
  readonly maxAttempts: number;
}

type Outcome = { ok: true } | { ok: false; error: InstanceError };

/**
 * Fires one claimed `schedule.fire` work item: picks the live instance of its slot, claims it with a
 * task id, opens a fresh session, submits the `schedule.fire` task, runs the optional `fire` callback,
 * then completes the instance and settles the work item in one commit. Each step is fenced by the
 * claim token; a reclaimed attempt continues from what the log shows (same task id, same session).
 */
export async function fireClaim(deps: FireDeps, claim: WorkClaim): Promise<FireResult> {
  const payload = claim.payload as { coreId: string; scheduleId: string; dueAt: string };
  const base = { workId: claim.workId, attempt: claim.attempt, ...payload };
  const result = (
    instance: ScheduleInstanceView | null,
    outcome: FireResult['outcome'],
    extra: Partial<FireResult> = {},
  ): FireResult => ({
    ...base,
    instanceId: instance?.instanceId ?? null,
    taskId: null,
    sessionId: null,
    outcome,
    error: null,
    ...extra,
  });
  const slot = await deps.ledger.atSlot(payload.coreId, payload.scheduleId, payload.dueAt);
  const live = slot.filter((v) => v.status === 'scheduled' || v.status === 'claimed');
  const pick = live.find((v) => v.status === 'claimed') ?? live.find((v) => v.workId === claim.workId) ?? live[0];
  for (const other of live) {
    if (other !== pick) {
      await deps.ledger.fail(other.instanceId, {
        code: 'duplicate',
        message: `instance ${pick!.instanceId} fires due time ${payload.dueAt}`,
      });
    }
  }
  if (!pick?.definition || !pick.signature) {
    const error = { code: 'not_fired', message: `no live instance for ${payload.scheduleId} at ${payload.dueAt}` };
    await settle(deps, claim, null, { ok: false, error });
    return result(null, 'not_fired', { error });
  }
  if (claim.attempt > deps.maxAttempts) {
    const error = { code: 'attempts_exhausted', message: `gave up after ${deps.maxAttempts} attempts` };
    await settle(deps, claim, pick.instanceId, { ok: false, error });
    return result(pick, 'failed', { error, taskId: pick.taskId, sessionId: pick.sessionId });
  }
  await deps.work.markRunning(claim);
  const { state, taskId } = await deps.ledger.claim(pick.instanceId, deps.ids.next('tsk'));
  if (state !== 'claimed' || taskId === null) {
    const error = { code: 'not_fired', message: `instance ${pick.instanceId} is ${state}` };
    await settle(deps, claim, null, { ok: false, error });
    return result(pick, 'not_fired', { error });
  }
  const definition = pick.definition;
  let sessionId = (await deps.ledger.get(pick.instanceId))?.sessionId ?? null;
  if (sessionId === null) {
    const started = await deps.startSession({
      coreId: payload.coreId,
      title: `Scheduled: ${payload.scheduleId} (${pick.dueLocal ?? payload.dueAt} ${definition.timezone})`,
      actor: deps.actor,
      scheduleId: payload.scheduleId,
      dueAt: payload.dueAt,
      instanceId: pick.instanceId,
      taskId,
      delivery: definition.delivery as ScheduleDelivery | null,
      fireKey: `${payload.coreId}/${payload.scheduleId}/${payload.dueAt}`,
    });
    await deps.work.heartbeat(claim);
    await deps.controlPlane.submitTask({
      taskId,
      sessionId: started.sessionId,
      kind: 'schedule.fire',
      title: `schedule ${payload.scheduleId} @ ${payload.dueAt}`,
      input: {
        coreId: payload.coreId,
        scheduleId: payload.scheduleId,
        dueAt: payload.dueAt,
        prompt: definition.prompt,
      },
      notifyPolicy: 'silent',
    });
    sessionId = started.sessionId;
  }
  const outcome = deps.fire
    ? await runFire(deps, deps.fire, claim, {
        ...payload,
        instanceId: pick.instanceId,
        taskId,
        sessionId,
        prompt: definition.prompt,
        delivery: definition.delivery as ScheduleDelivery | null,
        signature: pick.signature,
        attempt: claim.attempt,
        heartbeat: async () => {
          await deps.work.heartbeat(claim);
        },
      })
    : ({ ok: true } as const);
  await settle(deps, claim, pick.instanceId, outcome, taskId);
  return result(pick, outcome.ok ? 'completed' : 'failed', {
    taskId,
    sessionId,
    error: outcome.ok ? null : outcome.error,
  });
}

/** Runs the callback around the task's start and end; a task a crashed attempt started is not run again. */
async function runFire(deps: FireDeps, fire: FireHandler, claim: WorkClaim, ctx: ScheduledFire): Promise<Outcome> {
  const ref = { sessionId: ctx.sessionId, taskId: ctx.taskId };
  const task = await deps.controlPlane.getTask(ref);
  switch (task.status) {
    case 'created': {
      await deps.work.heartbeat(claim);
      await deps.controlPlane.startTask(ref, deps.owner);
      let summary: string | undefined;
      try {
        summary = (await fire(ctx))?.summary;
      } catch (err) {
        if (err instanceof StaleClaimError) throw err;
        const error = { code: 'fire_failed', message: (err as Error)?.message || String(err) };
        await deps.work.heartbeat(claim); // fenced: a reclaimed fire is settled by its new claimant
        await deps.controlPlane.failTask(ref, error);
        return { ok: false, error };
      }
      await deps.work.heartbeat(claim);
      await deps.controlPlane.completeTask(ref, summary === undefined ? {} : { summary });
      return { ok: true };
    }
    case 'completed':
    case 'archived':
      return { ok: true };
    case 'active':
    case 'waiting':
    case 'blocked': {
      const error = {
        code: 'interrupted',
        message: `attempt ${claim.attempt - 1} started this fire and did not finish; it is not run twice`,
      };
      await deps.controlPlane.failTask(ref, error);
      return { ok: false, error };
    }
    default:
      return { ok: false, error: task.error ?? { code: task.status, message: `the fire's task is ${task.status}` } };
  }
}

/**
 * Completes (or fails) the instance and settles the work item in one commit, instance first — only
 * while `claim` is the item's current, unexpired claim ({@link StaleClaimError} otherwise, nothing appended).
 */
function settle(
  deps: FireDeps,
  claim: WorkClaim,
  instanceId: string | null,
  outcome: Outcome,
  taskId?: string,
): Promise<void> {
  return commandLoop(deps.store, async () => {
    const item = await loadWork(deps.store, claim.workId);
    const now = new Date(deps.clock.now()).toISOString();
    if (item.claimToken !== claim.claimToken) {
      const why = item.claimToken ? 'a newer claim holds it' : `it is ${item.state} and holds no claim`;
      throw new StaleClaimError(claim.workId, claim.claimToken, why);
    }
    if (item.leaseUntil !== null && item.leaseUntil < now) {
      throw new StaleClaimError(claim.workId, claim.claimToken, `its lease expired at ${item.leaseUntil}`);
    }
    const streams: AppendStream[] = [];
    if (instanceId !== null) {
      const instance = await deps.ledger.load(instanceId);
      const command = outcome.ok
        ? ({ kind: 'complete', instanceId } as const)
        : ({ kind: 'fail', instanceId, error: outcome.error } as const);
      const events = decideScheduleInstance(command, instance.state);
      if (events.length > 0) streams.push(streamAppend(scheduleInstanceLifecycle.streamType, instance, events));
    }
    const workEvent = outcome.ok
      ? {
          type: 'work.succeeded' as const,
          data: { workId: claim.workId, claimToken: claim.claimToken, ...(taskId ? { externalRef: taskId } : {}) },
        }
      : {
          type: 'work.failed' as const,
          data: { workId: claim.workId, claimToken: claim.claimToken, error: outcome.error },
        };
    const events = checkEvents(workLifecycle, item.state, [workEvent], claim.workId);
    streams.push({
      streamType: workLifecycle.streamType,
      streamId: claim.workId,
      expectedVersion: item.version,
      events,
    });
    return { streams, result: undefined, options: { meta: { actor: deps.actor } } };
  });
}
