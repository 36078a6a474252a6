import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RecordedEvent } from '@demiurge/contracts';
import { DEFAULT_CORE_DIR } from '@demiurge/host';
import { initialWorkFacts, type WorkFacts, workFold } from '@demiurge/lifecycle';

/** The multi-host workload's schedule: due every `SCHEDULE_EVERY_S` seconds while it is enabled. */
export const SCHEDULE_ID = 'pulse';
export const SCHEDULE_EVERY_S = 10;

/** The bundled core plus the `pulse` schedule (every 10 s, no delivery: the answer stays in the fire's session). */
export function writeScheduledCore(dir: string): string {
  cpSync(DEFAULT_CORE_DIR, dir, { recursive: true });
  mkdirSync(join(dir, 'schedules'), { recursive: true });
  setScheduleEnabled(dir, true);
  return dir;
}

/** Rewrites the schedule file: hosts read it on every tick, so `false` closes the window of due times. */
export function setScheduleEnabled(core: string, enabled: boolean): void {
  writeFileSync(
    join(core, 'schedules', `${SCHEDULE_ID}.yaml`),
    `cron: "*/${SCHEDULE_EVERY_S} * * * * *"\nprompt: the pulse\nenabled: ${enabled}\n`,
  );
}

/** Every work item's state after the log (the work machine's fold), with its kind and last claim's owner. */
export function workItems(events: readonly RecordedEvent[]): Map<string, WorkFacts> {
  const items = new Map<string, WorkFacts>();
  const owners = new Map<string, string>();
  for (const e of events) {
    if (e.streamType !== 'work') continue;
    items.set(e.streamId, workFold.evolve(items.get(e.streamId) ?? initialWorkFacts, e, e.streamId));
    if (e.type === 'work.claimed') owners.set(e.streamId, (e.data as { owner: string }).owner);
  }
  // `owner` is dropped once an item leaves its claim: keep the last claimant for the report.
  for (const [id, facts] of items) items.set(id, { ...facts, owner: owners.get(id) ?? null });
  return items;
}

const OPEN = new Set(['queued', 'claimed', 'running', 'sending', 'retry_scheduled']);

/** Items someone still has to do (queued, claimed, running, sending, or due for a retry). */
export function unsettledWork(items: ReadonlyMap<string, WorkFacts>): string[] {
  return [...items]
    .filter(([, w]) => OPEN.has(w.status))
    .map(([id, w]) => `${id} ${w.kind} ${w.status} (attempts ${w.attempts}, owner ${w.owner})`);
}

/**
 * Items left `unknown` (a send's lease ran out between its intent and its outcome): only a host killed
 * mid-send may leave one. Those whose last claimant was not killed by the test are returned.
 */
export function unknownNotFromAKill(items: ReadonlyMap<string, WorkFacts>, killed: ReadonlySet<string>): string[] {
  return [...items]
    .filter(([, w]) => w.status === 'unknown' && !killed.has(w.owner ?? ''))
    .map(([id, w]) => `${id} ${w.kind} unknown, last claimed by ${w.owner} (not a killed host)`);
}

/** What the schedule's due times came to. */
export interface ScheduleReport {
  /** Due times from the first fired to the last. */
  readonly dueTimes: number;
  /** Due times in that window whose fire never started: no work item, no task, or a task never started. */
  readonly notFired: string[];
  /** Due times with more than one `schedule.fire` work item or task, or whose task started more than once. */
  readonly firedTwice: string[];
  /** Fires a killed host interrupted (their task started once, then failed `interrupted`: not run twice). */
  readonly interrupted: number;
  /**
   * Due times whose every claimant (`maxAttempts`, 3) was killed before the fire started: the fire failed
   * `attempts_exhausted` and did not fire, by design (never fired twice, retried a bounded number of times).
   */
  readonly exhaustedByKills: string[];
  /**
   * The due time still undecided when the test disabled the schedule (the window's close), that one host enqueued
   * while another, which read the file disabled, retired its instance (`schedule_disabled`): its fire failed
   * `not_fired`, as docs/schedules.md ("Exactly once") says. Only a due time less than one period before the close.
   */
  readonly closedByDisable: string[];
  /** The latest a due time was enqueued after it was due, in seconds (how late the hosts' ticks ran). */
  readonly maxEnqueueLateS: number;
}

/** Names a host process (its claim owner / actor id) in a failure message: the test's label, and whether it was killed. */
export type HostNamer = (owner: string) => string;

/** Every due time of the schedule's window fired exactly once (its task started once), across hosts and kills. */
export function scheduleReport(
  events: readonly RecordedEvent[],
  killed: ReadonlySet<string>,
  options: { closedAt?: number; who?: HostNamer } = {},
): ScheduleReport {
  const itemsByDue = new Map<string, number>();
  const dueOfItem = new Map<string, string>();
  const claimants = new Map<string, string[]>();
  const exhausted = new Set<string>();
  const tasksByDue = new Map<string, string[]>();
  const starts = new Map<string, number>();
  const lastWorkEvent = new Map<string, RecordedEvent>();
  const dueOfInstance = new Map<string, string>();
  const instanceErrors = new Map<string, string[]>();
  let interrupted = 0;
  let maxLateMs = 0;
  for (const e of events) {
    const data = e.data as Record<string, unknown>;
    if (e.type === 'work.enqueued' && data.kind === 'schedule.fire') {
      const dueAt = (data.payload as { dueAt: string }).dueAt;
      itemsByDue.set(dueAt, (itemsByDue.get(dueAt) ?? 0) + 1);
      dueOfItem.set(e.streamId, dueAt);
      maxLateMs = Math.max(maxLateMs, Date.parse(e.recordedAt) - Date.parse(dueAt));
    }
    if (dueOfItem.has(e.streamId)) lastWorkEvent.set(e.streamId, e);
    if (e.type === 'schedule_instance.scheduled') dueOfInstance.set(e.streamId, data.dueAt as string);
    if (e.type === 'schedule_instance.failed' && dueOfInstance.has(e.streamId)) {
      const dueAt = dueOfInstance.get(e.streamId)!;
      instanceErrors.set(dueAt, [...(instanceErrors.get(dueAt) ?? []), (data.error as { code: string }).code]);
    }
    if (e.type === 'work.claimed' && dueOfItem.has(e.streamId)) {
      claimants.set(e.streamId, [...(claimants.get(e.streamId) ?? []), data.owner as string]);
    }
    if (e.type === 'work.failed' && (data.error as { code?: string }).code === 'attempts_exhausted') {
      const dueAt = dueOfItem.get(e.streamId);
      // The last claimant settles it; every claimant before it was killed.
      if (dueAt && (claimants.get(e.streamId) ?? []).slice(0, -1).every((o) => killed.has(o))) exhausted.add(dueAt);
    }
    if (e.type === 'task.submitted' && data.kind === 'schedule.fire') {
      const dueAt = (data.input as { dueAt: string }).dueAt;
      tasksByDue.set(dueAt, [...(tasksByDue.get(dueAt) ?? []), data.taskId as string]);
    }
    if (e.type === 'task.started') starts.set(data.taskId as string, (starts.get(data.taskId as string) ?? 0) + 1);
    if (e.type === 'task.failed' && (data.error as { code?: string } | undefined)?.code === 'interrupted') {
      interrupted++;
    }
  }
  const due = [...itemsByDue.keys()].sort();
  const notFired: string[] = [];
  const firedTwice: string[] = [];
  const exhaustedByKills: string[] = [];
  const closedByDisable: string[] = [];
  const maxEnqueueLateS = Math.round(maxLateMs / 100) / 10;
  if (due.length === 0) {
    return { dueTimes: 0, notFired, firedTwice, interrupted, exhaustedByKills, closedByDisable, maxEnqueueLateS };
  }
  /** Retired by the disable that closed the window, its fire `not_fired`: the documented outcome of that race. */
  const closedByTheDisable = (dueAt: string): boolean => {
    const errors = instanceErrors.get(dueAt) ?? [];
    const items = [...dueOfItem].filter(([, d]) => d === dueAt).map(([id]) => lastWorkEvent.get(id));
    return (
      options.closedAt !== undefined &&
      Date.parse(dueAt) > options.closedAt - SCHEDULE_EVERY_S * 1000 &&
      errors.length > 0 &&
      errors.every((code) => code === 'schedule_disabled') &&
      items.every(
        (e) => e?.type === 'work.failed' && (e.data as { error: { code: string } }).error.code === 'not_fired',
      )
    );
  };
  const story = (dueAt: string) => dueTimeStory(events, dueAt, options.who ?? ((o) => o));
  const window: string[] = [];
  for (let t = Date.parse(due[0]!); t <= Date.parse(due.at(-1)!); t += SCHEDULE_EVERY_S * 1000) {
    window.push(new Date(t).toISOString());
  }
  for (const dueAt of window) {
    const items = itemsByDue.get(dueAt) ?? 0;
    const tasks = tasksByDue.get(dueAt) ?? [];
    const started = tasks.map((t) => starts.get(t) ?? 0);
    if (items > 1 || tasks.length > 1 || started.some((n) => n > 1)) {
      firedTwice.push(
        `${dueAt}: ${items} work items, ${tasks.length} tasks started ${started.join('+') || 0} times; ${story(dueAt)}`,
      );
    } else if ((tasks.length === 0 || started[0] === 0) && exhausted.has(dueAt)) {
      exhaustedByKills.push(dueAt);
    } else if (tasks.length === 0 && closedByTheDisable(dueAt)) {
      closedByDisable.push(`${dueAt}: ${story(dueAt)}`);
    } else if (items === 0 || tasks.length === 0 || started[0] === 0) {
      notFired.push(
        `${dueAt}: ${items} work items, ${tasks.length} tasks, started ${started[0] ?? 0} times; ${story(dueAt)}`,
      );
    }
  }
  return {
    dueTimes: window.length,
    notFired,
    firedTwice,
    interrupted,
    exhaustedByKills,
    closedByDisable,
    maxEnqueueLateS,
  };
}

/**
 * One due time's history in a line, each step with the host that took it and when: who recorded its instance(s),
 * who enqueued its fire, who claimed it (attempt, lease) and how the item ended, who retired an instance and why,
 * its task's start. For failure messages: which host held or lost what.
 */
export function dueTimeStory(events: readonly RecordedEvent[], dueAt: string, who: HostNamer): string {
  const steps: string[] = [];
  const instances = new Set<string>();
  const items = new Set<string>();
  const tasks = new Set<string>();
  const at = (e: RecordedEvent) => e.recordedAt.slice(11, 23);
  const actor = (e: RecordedEvent) => who((e.meta as { actor?: { id?: string } }).actor?.id ?? '?');
  for (const e of events) {
    const data = e.data as Record<string, unknown>;
    if (e.type === 'schedule_instance.scheduled' && data.dueAt === dueAt) instances.add(e.streamId);
    if (e.type === 'work.enqueued' && (data.payload as { dueAt?: string } | undefined)?.dueAt === dueAt) {
      if (data.kind === 'schedule.fire') items.add(e.streamId);
    }
    if (e.type === 'task.submitted' && (data.input as { dueAt?: string } | undefined)?.dueAt === dueAt) {
      if (data.kind === 'schedule.fire') tasks.add(e.streamId);
    }
    const code = (data.error as { code?: string } | undefined)?.code;
    let step: string | undefined;
    if (instances.has(e.streamId)) {
      if (e.type === 'schedule_instance.scheduled') step = `instance ${e.streamId} recorded by ${actor(e)}`;
      else if (e.type === 'schedule_instance.failed') step = `instance retired ${code} by ${actor(e)}`;
      else step = `instance ${e.type.slice('schedule_instance.'.length)} by ${actor(e)}`;
    } else if (items.has(e.streamId)) {
      if (e.type === 'work.enqueued') step = `work ${e.streamId} enqueued by ${actor(e)}`;
      else if (e.type === 'work.claimed') {
        step = `claimed by ${who(data.owner as string)} (attempt ${data.attempt}, lease to ${data.leaseUntil})`;
      } else step = `${e.type}${code ? ` ${code}` : ''} by ${actor(e)}`;
    } else if (tasks.has(e.streamId)) step = `task ${e.type.slice('task.'.length)} by ${actor(e)}`;
    if (step) steps.push(`${at(e)} ${step}`);
  }
  return steps.join('; ') || 'nothing in the log';
}

/** The claim figures a host process last logged (`serve --log-json`: "work claims: ..."), summed over processes. */
export function claimStats(stderrOfEachProcess: readonly string[]): { claimed: number; racesLost: number } {
  let claimed = 0;
  let racesLost = 0;
  for (const stderr of stderrOfEachProcess) {
    let last: { claimed: number; racesLost: number } | undefined;
    for (const line of stderr.split('\n')) {
      if (!line.includes('"work claims:')) continue;
      try {
        last = JSON.parse(line) as { claimed: number; racesLost: number };
      } catch {
        // a line cut by the kill
      }
    }
    claimed += last?.claimed ?? 0;
    racesLost += last?.racesLost ?? 0;
  }
  return { claimed, racesLost };
}

/** For a failure report: the events of a few unsettled items, of their fire task, and of the runs of its session. */
export function describeUnsettled(events: readonly RecordedEvent[], unsettled: readonly string[]): string {
  const out: string[] = [];
  const line = (e: RecordedEvent) =>
    `  ${e.position} ${e.recordedAt} ${e.streamId} ${e.type} by ${(e.meta as { actor?: { id?: string } }).actor?.id}`;
  for (const u of unsettled) {
    const workId = u.split(' ')[0]!;
    const work = events.filter((e) => e.streamId === workId);
    out.push(`${u}:`, ...work.map(line));
    const dueAt = (work[0]?.data as { payload?: { dueAt?: string } } | undefined)?.payload?.dueAt;
    const task = events.find(
      (e) => e.type === 'task.submitted' && (e.data as { input?: { dueAt?: string } }).input?.dueAt === dueAt,
    );
    if (!dueAt || !task) continue;
    const sessionId = (task.data as { sessionId: string }).sessionId;
    const runs = new Set(
      events
        .filter((e) => e.streamType === 'run' && (e.data as { sessionId?: string }).sessionId === sessionId)
        .map((e) => e.streamId),
    );
    out.push(...events.filter((e) => e.streamId === task.streamId || runs.has(e.streamId)).map(line));
  }
  return out.join('\n');
}

/** For a failure report: the events of the fire work items and schedule instances of the given due times. */
export function describeDueTimes(events: readonly RecordedEvent[], notFired: readonly string[]): string {
  const due = new Set(notFired.map((n) => n.split(': ')[0]!));
  const streams = new Set<string>();
  for (const e of events) {
    const data = e.data as { kind?: string; payload?: { dueAt?: string }; dueAt?: string };
    if (e.type === 'work.enqueued' && data.kind === 'schedule.fire' && due.has(data.payload?.dueAt ?? '')) {
      streams.add(e.streamId);
    }
    if (e.streamType === 'schedule_instance' && due.has(data.dueAt ?? '')) streams.add(e.streamId);
  }
  return events
    .filter((e) => streams.has(e.streamId))
    .map((e) => `  ${e.position} ${e.recordedAt} ${e.streamId} ${e.type} ${JSON.stringify(e.data).slice(0, 300)}`)
    .join('\n');
}
