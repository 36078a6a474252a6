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
}

/** Every due time of the schedule's window fired exactly once (its task started once), across hosts and kills. */
export function scheduleReport(events: readonly RecordedEvent[], killed: ReadonlySet<string>): ScheduleReport {
  const itemsByDue = new Map<string, number>();
  const dueOfItem = new Map<string, string>();
  const claimants = new Map<string, string[]>();
  const exhausted = new Set<string>();
  const tasksByDue = new Map<string, string[]>();
  const starts = new Map<string, number>();
  let interrupted = 0;
  for (const e of events) {
    const data = e.data as Record<string, unknown>;
    if (e.type === 'work.enqueued' && data.kind === 'schedule.fire') {
      const dueAt = (data.payload as { dueAt: string }).dueAt;
      itemsByDue.set(dueAt, (itemsByDue.get(dueAt) ?? 0) + 1);
      dueOfItem.set(e.streamId, dueAt);
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
  if (due.length === 0) return { dueTimes: 0, notFired, firedTwice, interrupted, exhaustedByKills };
  const window: string[] = [];
  for (let t = Date.parse(due[0]!); t <= Date.parse(due.at(-1)!); t += SCHEDULE_EVERY_S * 1000) {
    window.push(new Date(t).toISOString());
  }
  for (const dueAt of window) {
    const items = itemsByDue.get(dueAt) ?? 0;
    const tasks = tasksByDue.get(dueAt) ?? [];
    const started = tasks.map((t) => starts.get(t) ?? 0);
    if (items > 1 || tasks.length > 1 || started.some((n) => n > 1)) {
      firedTwice.push(`${dueAt}: ${items} work items, ${tasks.length} tasks started ${started.join('+') || 0} times`);
    } else if ((tasks.length === 0 || started[0] === 0) && exhausted.has(dueAt)) {
      exhaustedByKills.push(dueAt);
    } else if (items === 0 || tasks.length === 0 || started[0] === 0) {
      notFired.push(`${dueAt}: ${items} work items, ${tasks.length} tasks, started ${started[0] ?? 0} times`);
    }
  }
  return { dueTimes: window.length, notFired, firedTwice, interrupted, exhaustedByKills };
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
