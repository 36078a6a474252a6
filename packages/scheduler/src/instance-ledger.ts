import { createHash } from 'node:crypto';
import { type Actor, findEvent, type IdGenerator, IdPrefix } from '@demiurge/contracts';
import {
  commandLoop,
  type EventStore,
  type Loaded,
  loadAggregate,
  type ProjectionReader,
  streamAppend,
} from '@demiurge/event-store';
import {
  initialScheduleInstanceFacts,
  type ScheduleInstanceFacts,
  type ScheduleInstanceState,
  scheduleInstanceFold,
} from '@demiurge/lifecycle';
import { SchedulerProjectorMissingError } from './errors.js';
import type { Schedule } from './schedule-file.js';
import { decideScheduleInstance } from './schedule-instance.decider.js';
import {
  ScheduleInstanceCollections as C,
  type ScheduleInstanceMeta,
  type ScheduleInstanceView,
  type ScheduleSummary,
  scheduleKey,
  slotKey,
} from './schedule-instance.view.js';
import { scheduleInstancesProjector } from './schedule-instances.projector.js';
import { scheduleEventId } from './signature.js';

const INSTANCE = scheduleInstanceFold.streamType;

/** A failure recorded on an instance. */
export interface InstanceError {
  readonly code: string;
  readonly message: string;
}

/**
 * The schedule-instance commands and reads the runtime is built from: every change a
 * `schedule_instance.*` event decided by `decideScheduleInstance` on the instance's fold (load → decide →
 * append at the stream version), every read from the `schedule-instances` projection. Internal to the package.
 */
export class InstanceLedger {
  readonly reader: ProjectionReader;

  constructor(
    private readonly store: EventStore,
    private readonly ids: IdGenerator,
    private readonly actor: Actor,
  ) {
    if (!store.projectorNames.includes(scheduleInstancesProjector.name)) {
      throw new SchedulerProjectorMissingError(scheduleInstancesProjector.name);
    }
    this.reader = store.projection(scheduleInstancesProjector.name);
  }

  summary(coreId: string, scheduleId: string): Promise<ScheduleSummary | undefined> {
    return this.reader.get<ScheduleSummary>(C.schedules, scheduleKey(coreId, scheduleId));
  }

  /** Every schedule of a core that has instances. */
  summaries(coreId: string): Promise<ScheduleSummary[]> {
    return this.reader.list<ScheduleSummary>(C.schedules, { prefix: `${encodeURIComponent(coreId)}/` });
  }

  get(instanceId: string): Promise<ScheduleInstanceView | undefined> {
    return this.reader.get<ScheduleInstanceView>(C.instances, instanceId);
  }

  /** A schedule's instances in due-time order (then creation order), every signature; the last `limit`. */
  async history(coreId: string, scheduleId: string, options: { prefix?: string; limit?: number } = {}) {
    const refs = await this.reader.list<{ instanceId: string }>(C.bySchedule, {
      prefix: `${scheduleKey(coreId, scheduleId)}/${options.prefix ?? ''}`,
    });
    const views: ScheduleInstanceView[] = [];
    for (const ref of options.limit === undefined ? refs : refs.slice(-options.limit)) {
      const view = await this.get(ref.instanceId);
      if (view) views.push(view);
    }
    return views.sort((a, b) => (a.dueAt === b.dueAt ? a.position - b.position : a.dueAt < b.dueAt ? -1 : 1));
  }

  /** The instances of one fire slot (core, schedule, due time), in creation order. */
  atSlot(coreId: string, scheduleId: string, dueAt: string): Promise<ScheduleInstanceView[]> {
    return this.history(coreId, scheduleId, { prefix: `${dueAt}/` });
  }

  /** The `schedule.fire` work item of a fire slot, if one was enqueued. */
  async fireOf(coreId: string, scheduleId: string, dueAt: string): Promise<string | null> {
    const fire = await this.reader.get<{ workId: string }>(C.fires, slotKey(coreId, scheduleId, dueAt));
    return fire?.workId ?? null;
  }

  /**
   * Records `schedule_instance.scheduled` for (core, schedule, signature, due time), once across
   * processes: a live instance of the same signature is reused, and the append's idempotency key
   * makes concurrent callers agree. A retired (error) instance of the slot does not block a new one.
   */
  async schedule(coreId: string, schedule: Schedule, dueAt: string): Promise<{ instanceId: string; created: boolean }> {
    const same = (await this.atSlot(coreId, schedule.id, dueAt)).filter((v) => v.signature === schedule.signature);
    const live = same.find((v) => v.status !== 'error');
    if (live) return { instanceId: live.instanceId, created: false };
    const generation = same.length === 0 ? '' : `#${same.length}`;
    const meta: ScheduleInstanceMeta = {
      coreId,
      scheduleId: schedule.id,
      signature: schedule.signature,
      cron: schedule.cron,
      timezone: schedule.timezone,
      prompt: schedule.prompt,
      delivery: schedule.delivery,
    };
    const instanceId = this.ids.next(IdPrefix.scheduleInstance);
    const result = await this.store.append(
      {
        streamType: INSTANCE,
        streamId: instanceId,
        expectedVersion: 'no_stream',
        events: decideScheduleInstance(
          { kind: 'schedule', instanceId, scheduleId: scheduleEventId(coreId, schedule.id), dueAt },
          initialScheduleInstanceFacts,
        ),
      },
      {
        idempotencyKey: idempotencyKey(`${slotKey(coreId, schedule.id, dueAt)}/${schedule.signature}${generation}`),
        meta: { actor: this.actor, schedule: meta },
      },
    );
    const first = findEvent(result.events, 'schedule_instance.scheduled');
    const recorded = first ? first.data.scheduleInstanceId : instanceId;
    return { instanceId: recorded, created: !result.replayed };
  }

  /** Retires a `scheduled` instance (`schedule_instance.failed`); false when it had moved on already. */
  fail(instanceId: string, error: InstanceError): Promise<boolean> {
    return commandLoop(this.store, async () => {
      const instance = await this.load(instanceId);
      const events = decideScheduleInstance({ kind: 'retire', instanceId, error }, instance.state);
      if (events.length === 0) return { streams: [], result: false };
      return {
        streams: [streamAppend(INSTANCE, instance, events)],
        result: true,
        options: { meta: { actor: this.actor } },
      };
    });
  }

  /**
   * Claims a `scheduled` instance for a fire with its task id (`schedule_instance.claimed`). An instance
   * claimed already keeps the task id it was claimed with. Returns the state and task id after.
   */
  claim(instanceId: string, taskId: string): Promise<{ state: ScheduleInstanceState; taskId: string | null }> {
    return commandLoop(this.store, async () => {
      const instance = await this.load(instanceId);
      const events = decideScheduleInstance({ kind: 'claim', instanceId, taskId }, instance.state);
      if (events.length === 0) {
        return { streams: [], result: { state: instance.state.status, taskId: instance.state.taskId } };
      }
      return {
        streams: [streamAppend(INSTANCE, instance, events)],
        result: { state: 'claimed' as const, taskId },
        options: { meta: { actor: this.actor } },
      };
    });
  }

  /** Loads an instance with the one schedule-instance fold (`scheduleInstanceFold`, shared with the projector). */
  load(instanceId: string): Promise<Loaded<ScheduleInstanceFacts>> {
    return loadAggregate(this.store, scheduleInstanceFold, instanceId);
  }
}

/** Idempotency keys are at most 256 characters: long ones are hashed. */
function idempotencyKey(slot: string): string {
  const key = `schedule_instance.scheduled:${slot}`;
  return key.length <= 240 ? key : `schedule_instance.scheduled:#${createHash('sha256').update(slot).digest('hex')}`;
}
