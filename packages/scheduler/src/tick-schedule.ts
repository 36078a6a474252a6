import type { HostWorkLifecycleRuntime } from '@demiurge/control-plane';
import { COUNT_CAP, compileCron } from './cron-spec.js';
import type { InstanceError, InstanceLedger } from './instance-ledger.js';
import { missedKeep, planDue } from './missed-policy.js';
import type { Schedule } from './schedule-file.js';
import type { OpenInstance, ScheduleSummary } from './schedule-instance.view.js';

/** What a tick did to one due time of one schedule. */
export type TickAction =
  /** The next due time was recorded (`schedule_instance.scheduled`, in the future). */
  | 'scheduled'
  /** The due time was handed to durable work (`enqueueScheduleFire`): it fires on `runDue`. */
  | 'enqueued'
  /** The due time was missed and, by the missed-fire policy, does not fire (`schedule_instance.failed`, `missed`). */
  | 'missed'
  /** The schedule was edited before the instance was due: its signature is no longer current. */
  | 'superseded'
  /** The schedule is disabled (`enabled: false`). */
  | 'disabled'
  /** The schedule's file is gone. */
  | 'removed'
  /** Another instance already fired this due time (the exactly-once key has no signature). */
  | 'duplicate';

export interface TickEntry {
  readonly scheduleId: string;
  readonly dueAt: string;
  readonly instanceId: string;
  readonly action: TickAction;
  /** The work item, for `enqueued`. */
  readonly workId?: string;
}

/** Error codes of instances a tick retires; after one of these, the schedule starts afresh (no past fires). */
export const RETIRED_CODES: readonly string[] = ['schedule_disabled', 'schedule_removed'];

export interface TickContext {
  readonly ledger: InstanceLedger;
  readonly host: HostWorkLifecycleRuntime;
  readonly coreId: string;
  readonly now: number;
  readonly missedAfterMs: number;
  readonly entries: TickEntry[];
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * One schedule's tick. The active signature is the one of the last instance created; a schedule whose
 * signature differs (new, or edited) or whose last instance was retired starts afresh: its undecided
 * instances are superseded and only the next due time after now is recorded, so it never fires for
 * the past. An active schedule fires what came due since its cursor, by its missed-fire policy.
 * Every schedule ends the tick with its next due time recorded (the "seen" marker).
 */
export async function tickSchedule(ctx: TickContext, schedule: Schedule): Promise<void> {
  const summary = await ctx.ledger.summary(ctx.coreId, schedule.id);
  const undecided = Object.values(summary?.open ?? {}).filter((o) => o.workId === null);
  if (!schedule.enabled) {
    await retire(ctx, schedule.id, summary, undecided, 'schedule_disabled', schedule);
    return;
  }
  const latest = summary?.latest;
  const active =
    latest !== undefined && latest.signature === schedule.signature && !RETIRED_CODES.includes(latest.errorCode ?? '');
  const stale = undecided.filter((o) => !active || o.signature !== schedule.signature);
  for (const o of stale) {
    await retireOne(ctx, schedule.id, o, 'superseded', {
      code: 'superseded',
      message: `schedule ${schedule.id} changed (signature ${o.signature} → ${schedule.signature}) before this instance fired`,
    });
  }
  if (active && summary) {
    const mine = undecided.filter((o) => o.signature === schedule.signature && o.dueAt <= iso(ctx.now));
    await fireDue(ctx, schedule, summary.cursors[schedule.signature]!, mine);
  }
  const pending = undecided.some(
    (o) => !stale.includes(o) && o.signature === schedule.signature && o.dueAt > iso(ctx.now),
  );
  if (!pending) await recordNext(ctx, schedule);
}

/** Records the next due time after now, if the cron has one. */
async function recordNext(ctx: TickContext, schedule: Schedule): Promise<void> {
  const next = compileCron(schedule.cron, schedule.timezone).nextAfter(ctx.now);
  if (next === null) return;
  const { instanceId, created } = await ctx.ledger.schedule(ctx.coreId, schedule, iso(next));
  if (created) ctx.entries.push({ scheduleId: schedule.id, dueAt: iso(next), instanceId, action: 'scheduled' });
}

/** Fires (or records as missed) every due time in (cursor, now] plus the undecided instances due by now. */
async function fireDue(ctx: TickContext, schedule: Schedule, cursor: string, mine: OpenInstance[]): Promise<void> {
  const spec = compileCron(schedule.cron, schedule.timezone);
  const lateUntil = ctx.now - ctx.missedAfterMs - 1;
  const from = Date.parse(cursor);
  const isMissed = (dueAt: string) => Date.parse(dueAt) <= lateUntil;
  const computedMissed = spec.latest(from, lateUntil, missedKeep(schedule.missed, schedule.catchUpLimit)).map(iso);
  const computedOnTime = spec.between(Math.max(from, lateUntil), ctx.now).map(iso);
  const mineMissed = mine.map((o) => o.dueAt).filter(isMissed);
  const missed = unique([...mineMissed, ...computedMissed]);
  const onTime = unique([...mine.map((o) => o.dueAt).filter((d) => !isMissed(d)), ...computedOnTime]);
  if (missed.length === 0 && onTime.length === 0) return;
  const missedTotal = mineMissed.length + (lateUntil > from ? spec.count(from, lateUntil) : 0);
  const plan = planDue(schedule.missed, schedule.catchUpLimit, { missed, missedTotal, onTime });
  const byDue = new Map(mine.map((o) => [o.dueAt, o]));
  for (const dueAt of plan.fire) {
    const existing = byDue.get(dueAt);
    const fired = await ctx.ledger.fireOf(ctx.coreId, schedule.id, dueAt);
    if (fired !== null) {
      // Enqueued already: by another process for this very instance (it carries the work id now), or
      // for another instance of the slot (this one came later and must not fire the due time again).
      const own = existing && (await ctx.ledger.get(existing.instanceId))?.workId === fired;
      if (existing && !own) {
        await retireOne(ctx, schedule.id, existing, 'duplicate', {
          code: 'duplicate',
          message: `due time ${dueAt} already fired (work ${fired})`,
        });
      }
      continue;
    }
    const { instanceId } = existing ?? (await ctx.ledger.schedule(ctx.coreId, schedule, dueAt));
    const { workId, created } = await ctx.host.enqueueScheduleFire({
      coreId: ctx.coreId,
      scheduleId: schedule.id,
      dueAt,
    });
    if (created) ctx.entries.push({ scheduleId: schedule.id, dueAt, instanceId, action: 'enqueued', workId });
  }
  const why = (dueAt: string): InstanceError => ({
    code: 'missed',
    message:
      `due ${dueAt}, first seen ${Math.round((ctx.now - Date.parse(dueAt)) / 1000)} s late; ${plan.reason} ` +
      `(${plan.notFiredTotal}${plan.notFiredTotal >= COUNT_CAP ? '+' : ''} missed due time(s) did not fire)`,
  });
  for (const dueAt of plan.notFired) {
    const existing = byDue.get(dueAt);
    if (existing) await retireOne(ctx, schedule.id, existing, 'missed', why(dueAt));
  }
  // The cursor must pass what was decided: when the latest due time does not fire, record it as missed.
  const last = [...missed, ...onTime].sort().at(-1)!;
  if (!plan.fire.includes(last) && !byDue.has(last)) {
    const { instanceId } = await ctx.ledger.schedule(ctx.coreId, schedule, last);
    await retireOne(ctx, schedule.id, { instanceId, dueAt: last }, 'missed', why(last));
  }
}

/**
 * Retires a schedule that must not fire (disabled, or its file removed): its undecided instances fail
 * with `code`, and if the last instance is not retired yet, a retired marker is recorded at the next due
 * time, so that enabling it again starts afresh instead of catching up.
 */
export async function retire(
  ctx: TickContext,
  scheduleId: string,
  summary: ScheduleSummary | undefined,
  undecided: readonly OpenInstance[],
  code: 'schedule_disabled' | 'schedule_removed',
  schedule?: Schedule,
): Promise<void> {
  if (!summary) return;
  const action = code === 'schedule_disabled' ? 'disabled' : 'removed';
  const message =
    code === 'schedule_disabled' ? `schedule ${scheduleId} is disabled` : `schedule ${scheduleId} was removed`;
  for (const o of undecided) await retireOne(ctx, scheduleId, o, action, { code, message });
  const after = await ctx.ledger.summary(ctx.coreId, scheduleId);
  if (!after || RETIRED_CODES.includes(after.latest.errorCode ?? '')) return;
  const basis = schedule ?? (await definitionOf(ctx, after));
  if (!basis) return;
  const next = compileCron(basis.cron, basis.timezone).nextAfter(ctx.now);
  if (next === null) return;
  const { instanceId } = await ctx.ledger.schedule(ctx.coreId, basis, iso(next));
  await retireOne(ctx, scheduleId, { instanceId, dueAt: iso(next) }, action, { code, message });
}

/** The schedule as its last instance recorded it (for a schedule whose file is gone). */
async function definitionOf(ctx: TickContext, summary: ScheduleSummary): Promise<Schedule | undefined> {
  const view = await ctx.ledger.get(summary.latest.instanceId);
  if (!view?.definition || !view.signature || !view.scheduleId) return undefined;
  const { cron, timezone, prompt } = view.definition;
  const delivery = view.definition.delivery as Schedule['delivery'];
  return {
    id: view.scheduleId,
    file: '',
    cron,
    timezone,
    prompt,
    delivery,
    enabled: false,
    missed: 'skip',
    catchUpLimit: 1,
    signature: view.signature,
  };
}

async function retireOne(
  ctx: TickContext,
  scheduleId: string,
  o: Pick<OpenInstance, 'instanceId' | 'dueAt'>,
  action: TickAction,
  error: InstanceError,
): Promise<void> {
  if (await ctx.ledger.fail(o.instanceId, error)) {
    ctx.entries.push({ scheduleId, dueAt: o.dueAt, instanceId: o.instanceId, action });
  }
}

function unique(times: readonly string[]): string[] {
  return [...new Set(times)].sort();
}
