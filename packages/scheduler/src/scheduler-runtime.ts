import type { Actor, Clock, IdGenerator } from '@demiurge/contracts';
import {
  type DurableWorkRuntime,
  type HostWorkLifecycleRuntime,
  parseSpec,
  type RuntimeControlPlane,
  type WorkClaim,
  WorkKind,
} from '@demiurge/control-plane';
import type { EventStore } from '@demiurge/event-store';
import { z } from 'zod';
import { compileCron, wallClock } from './cron-spec.js';
import type { ScheduleFileError } from './errors.js';
import { fireClaim } from './fire-claim.js';
import type { FireHandler, FireResult, StartSessionSpec } from './fire-types.js';
import { InstanceLedger } from './instance-ledger.js';
import { type LoadedSchedules, loadSchedules } from './load-schedules.js';
import type { Schedule } from './schedule-file.js';
import type { ScheduleInstanceView } from './schedule-instance.view.js';
import { RETIRED_CODES, retire, type TickContext, type TickEntry, tickSchedule } from './tick-schedule.js';

/** Where a tick reads schedules: a function (a core directory is read with {@link loadSchedules}). */
export type ScheduleSource = () => LoadedSchedules | Promise<LoadedSchedules>;

export interface SchedulerRuntimeOptions {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly host: HostWorkLifecycleRuntime;
  readonly work: DurableWorkRuntime;
  readonly controlPlane: RuntimeControlPlane;
  /** The Agent Core whose schedules this runtime ticks. */
  readonly coreId: string;
  /** Who schedules and fires (the system principal's id; the work items' claim owner). */
  readonly owner: string;
  /** Opens a fresh session for a fire. */
  readonly startSession: (spec: StartSessionSpec) => Promise<{ sessionId: string }>;
  /** The Agent Core directory (`<core>/schedules/*.yaml`, read on every tick), or a source function. */
  readonly schedules: string | ScheduleSource;
  /** Runs a fire's turn (issue 8/8). Without it, a fire is complete once its task is submitted. */
  readonly fire?: FireHandler;
  /** A due time first seen more than this long after it passed is missed (the policy applies). Default 60 s. */
  readonly missedAfterMs?: number;
  /** Lease of a claimed fire. Default: the work runtime's. */
  readonly leaseMs?: number;
  /** Claims of one fire before it fails for good. Default 3. */
  readonly maxAttempts?: number;
}

/** What one `tick()` did. */
export interface TickReport {
  readonly at: string;
  /** The valid schedules it ticked. */
  readonly schedules: number;
  readonly entries: readonly TickEntry[];
  /** Schedule files that could not be used (they did not stop the others). */
  readonly errors: readonly ScheduleFileError[];
}

/** The next fire times of one schedule, for the operator status. */
export interface UpcomingFires {
  readonly scheduleId: string;
  readonly signature: string;
  readonly cron: string;
  readonly timezone: string;
  readonly enabled: boolean;
  /** Ascending; empty when disabled. `local` is the wall-clock time in the schedule's zone. */
  readonly next: readonly { readonly dueAt: string; readonly local: string }[];
}

const RunDueOptions = z.object({
  limit: z.number().int().positive().max(1000),
  leaseMs: z.number().int().positive().optional(),
});

/**
 * SchedulerRuntime (seed 003): cron calculation, due-instance records and fresh scheduled sessions.
 * `tick()` turns the core's schedules into `schedule_instance` records and `schedule.fire` work items
 * (exactly one per core, schedule and due time, across processes); `runDue()` claims those items and
 * fires them: a fresh session, a `schedule.fire` task, the optional `fire` callback, then the instance
 * completed and the work item settled in one commit. The store must run {@link schedulerProjectors}.
 *
 * @example
 * const scheduler = new SchedulerRuntime({ store, clock, ids, host, work, controlPlane, coreId: 'default',
 *   owner: 'host-1', schedules: coreDir, startSession: (s) => sessions.create({ title: s.title, coreId: s.coreId }) });
 * setInterval(async () => { await scheduler.tick(); await scheduler.runDue({ limit: 10 }); }, 15_000);
 */
export class SchedulerRuntime {
  private readonly ledger: InstanceLedger;
  private readonly actor: Actor;
  private readonly source: ScheduleSource;

  constructor(private readonly options: SchedulerRuntimeOptions) {
    this.actor = { kind: 'system', id: options.owner };
    this.ledger = new InstanceLedger(options.store, options.ids, this.actor);
    const dir = options.schedules;
    this.source = typeof dir === 'string' ? () => loadSchedules(dir) : dir;
  }

  /**
   * Records what is due now for every schedule of the core (see docs/schedules.md): new or edited schedules
   * start at their next due time, due times since the last tick are enqueued or recorded as missed by
   * the schedule's policy, disabled and removed schedules retire their pending instances.
   */
  async tick(): Promise<TickReport> {
    const now = this.options.clock.now();
    const { schedules, errors } = await this.source();
    const ctx: TickContext = {
      ledger: this.ledger,
      host: this.options.host,
      coreId: this.options.coreId,
      now,
      missedAfterMs: this.options.missedAfterMs ?? 60_000,
      entries: [],
    };
    for (const schedule of schedules) await tickSchedule(ctx, schedule);
    const known = new Set([...schedules.map((s) => s.id), ...errors.map((e) => e.scheduleId)]);
    for (const summary of await this.ledger.summaries(this.options.coreId)) {
      if (known.has(summary.scheduleId) || RETIRED_CODES.includes(summary.latest.errorCode ?? '')) continue;
      const undecided = Object.values(summary.open).filter((o) => o.workId === null);
      await retire(ctx, summary.scheduleId, summary, undecided, 'schedule_removed');
    }
    return { at: new Date(now).toISOString(), schedules: schedules.length, entries: ctx.entries, errors };
  }

  /**
   * Claims up to `limit` due `schedule.fire` work items, one at a time (expired claims included: a new claim
   * token, attempt + 1, the same due time) and fires each before claiming the next. A failure of one attempt is reported as
   * `outcome: 'error'` with its `cause`; the others still run.
   */
  async runDue(options: { limit: number; leaseMs?: number }): Promise<FireResult[]> {
    const parsed = parseSpec('runDue options', RunDueOptions, options);
    const leaseMs = parsed.leaseMs ?? this.options.leaseMs;
    const results: FireResult[] = [];
    // One claim at a time, each right before its fire runs: a fire runs a turn, and a claim taken for a later
    // fire would lose its lease while the earlier ones run (another host may take that fire meanwhile).
    for (let n = 0; n < parsed.limit; n++) {
      const [claim] = await this.options.work.claimDue({
        kind: WorkKind.scheduleFire,
        limit: 1,
        ...(leaseMs === undefined ? {} : { leaseMs }),
      });
      if (!claim) break;
      try {
        results.push(await this.runClaim(claim));
      } catch (cause) {
        const p = claim.payload as { coreId: string; scheduleId: string; dueAt: string };
        const e = cause as { code?: unknown; message?: unknown };
        results.push({
          workId: claim.workId,
          attempt: claim.attempt,
          ...p,
          instanceId: null,
          taskId: null,
          sessionId: null,
          outcome: 'error',
          error: { code: typeof e?.code === 'string' ? e.code : 'error', message: String(e?.message ?? cause) },
          cause,
        });
      }
    }
    return results;
  }

  /**
   * Fires one claimed `schedule.fire` work item. With a claim that is no longer current (reclaimed
   * after its lease ran out) it throws `StaleClaimError` and changes nothing.
   */
  runClaim(claim: WorkClaim): Promise<FireResult> {
    return fireClaim(
      {
        store: this.options.store,
        clock: this.options.clock,
        ids: this.options.ids,
        ledger: this.ledger,
        work: this.options.work,
        controlPlane: this.options.controlPlane,
        owner: this.options.owner,
        actor: this.actor,
        startSession: this.options.startSession,
        fire: this.options.fire,
        maxAttempts: this.options.maxAttempts ?? 3,
      },
      claim,
    );
  }

  /** The next `n` fire times of every schedule of the core (from the injected clock). */
  async upcoming(n: number): Promise<UpcomingFires[]> {
    const now = this.options.clock.now();
    const { schedules } = await this.source();
    return schedules.map((s: Schedule) => ({
      scheduleId: s.id,
      signature: s.signature,
      cron: s.cron,
      timezone: s.timezone,
      enabled: s.enabled,
      next: s.enabled
        ? compileCron(s.cron, s.timezone)
            .between(now, Number.POSITIVE_INFINITY, n)
            .map((t) => ({ dueAt: new Date(t).toISOString(), local: wallClock(t, s.timezone) }))
        : [],
    }));
  }

  /**
   * A schedule's instances, every signature (an edit never orphans them), in due-time order; with
   * `limit`, the latest ones. For the operator status.
   */
  history(scheduleId: string, options: { limit?: number } = {}): Promise<ScheduleInstanceView[]> {
    return this.ledger.history(this.options.coreId, scheduleId, options);
  }
}
